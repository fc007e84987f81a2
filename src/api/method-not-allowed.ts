// 405 for a path the API has under another method (PUT /v1/runs, PATCH /healthz), with the Allow
// header; a path the API does not have at all stays 404 not_found. Routes are recorded as they are
// registered; once they all are, each path gets one hidden route for the methods it lacks. It
// answers in onRequest, before any body is read or parsed.
import type { FastifyInstance, HTTPMethods } from 'fastify';
import { KeelError } from '../domain/keel-error.ts';

/**
 * The methods a client may reasonably try on an API path; the others are not routed at all (404).
 */
const ANSWERED_METHODS = ['DELETE', 'GET', 'HEAD', 'OPTIONS', 'PATCH', 'POST', 'PUT'] as const;

export interface RouteMethods {
  /** Registers the 405 routes; call once, after every other route is registered. */
  answerOtherMethods(): void;
}

/** Starts recording routes; call before registering any. */
export function recordRouteMethods(app: FastifyInstance): RouteMethods {
  const methodsByPath = new Map<string, Set<string>>();
  let sealed = false;
  app.addHook('onRoute', (route) => {
    if (sealed) return;
    const set = methodsByPath.get(route.url) ?? new Set<string>();
    for (const method of [route.method].flat()) set.add(method.toUpperCase());
    methodsByPath.set(route.url, set);
  });
  return {
    answerOtherMethods() {
      sealed = true;
      for (const [url, methods] of methodsByPath) {
        if (methods.has('GET')) methods.add('HEAD'); // Fastify answers HEAD for every GET route
        const missing = ANSWERED_METHODS.filter((m) => !methods.has(m));
        if (missing.length === 0) continue;
        const allow = ANSWERED_METHODS.filter((m) => methods.has(m)).join(', ');
        app.route({
          method: missing as HTTPMethods[],
          url,
          schema: { hide: true },
          onRequest: async (request, reply) => {
            void reply.header('allow', allow);
            throw new KeelError(
              'method_not_allowed',
              `${request.method} is not allowed on ${url}; allowed: ${allow}`,
              { details: { allow: allow.split(', ') } },
            );
          },
          handler: async () => undefined,
        });
      }
    },
  };
}
