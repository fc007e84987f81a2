// JSON values as they are journaled, stored and sent over the API: the one definition every plane
// shares. Anything that is not representable here (undefined, functions, class instances, bigint)
// never reaches the store.

/** A JSON value. */
export type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
