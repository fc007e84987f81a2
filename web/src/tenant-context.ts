// The signed-in tenant (name, served agents), loaded once after sign-in and shared by every page.
import { createContext, useContext } from 'react';
import type { TenantOverview } from './api.ts';

export const TenantContext = createContext<TenantOverview | undefined>(undefined);
export const useTenant = (): TenantOverview | undefined => useContext(TenantContext);
