// The deployment files (Dockerfile, deploy/compose.yaml, deploy/kubernetes/) checked without a container runtime:
// every Kubernetes object is validated against the Kubernetes API's own OpenAPI schema (kubernetes-models), and
// the files agree with Keel: each container runs a real `keel` command, reads only variables Keel knows, is probed
// on routes its role serves, and drains on SIGTERM; compose has PostgreSQL, a migration, one server and two
// workers; the image is multi-stage on Node 24 and ships the compiled dist/.
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { Secret, Service } from 'kubernetes-models/v1';
import { Deployment } from 'kubernetes-models/apps/v1';
import { Job } from 'kubernetes-models/batch/v1';
import { parseAllDocuments } from 'yaml';
import { ENV_VARS } from '../src/config/config.ts';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const K8S = join(ROOT, 'deploy', 'kubernetes');
const COMMANDS = new Set(['server', 'worker', 'migrate', 'dev']);

type Obj = Record<string, any>;

function yamlDocuments(file: string): Obj[] {
  // merge: compose files use YAML merge keys (`<<: *keel`), as Compose itself reads them.
  const docs = parseAllDocuments(readFileSync(file, 'utf8'), { merge: true });
  for (const doc of docs) assert.deepEqual(doc.errors, [], `${file}: ${doc.errors.join('; ')}`);
  return docs.map((doc) => doc.toJS() as Obj).filter((doc) => doc !== null);
}

const MODELS: Record<string, (o: Obj) => { validate(): void }> = {
  Secret: (o) => new Secret(o as never),
  Service: (o) => new Service(o as never),
  Deployment: (o) => new Deployment(o as never),
  Job: (o) => new Job(o as never),
};

function kubernetesObjects(): Obj[] {
  return readdirSync(K8S)
    .filter((f) => f.endsWith('.yaml') && f !== 'kustomization.yaml')
    .flatMap((f) => yamlDocuments(join(K8S, f)));
}

/** The Keel containers of a pod template, with the role their args run. */
function keelContainers(objects: Obj[]) {
  return objects
    .filter((o) => o.kind === 'Deployment' || o.kind === 'Job')
    .flatMap((o) =>
      (o.spec.template.spec.containers as Obj[]).map((c) => ({ owner: o, container: c })),
    );
}

test('every Kubernetes object validates against the Kubernetes OpenAPI schema', () => {
  const objects = kubernetesObjects();
  assert.deepEqual(objects.map((o) => o.kind).sort(), [
    'Deployment',
    'Deployment',
    'Job',
    'Secret',
    'Service',
  ]);
  for (const object of objects) {
    const model = MODELS[object.kind];
    assert.ok(model !== undefined, `a validator for ${object.kind}`);
    assert.doesNotThrow(() => model(object).validate(), `${object.kind} ${object.metadata.name}`);
  }
  // The schema check can fail: a misspelt field is refused.
  const broken = structuredClone(objects.find((o) => o.kind === 'Deployment')!);
  broken.spec.template.spec.containers[0].readinessProbe.httpGet.port = { not: 'a port' };
  assert.throws(() => new Deployment(broken as never).validate());
  // Every file is listed in the kustomization.
  const kustomization = yamlDocuments(join(K8S, 'kustomization.yaml'))[0]!;
  assert.deepEqual(
    [...kustomization.resources].sort(),
    readdirSync(K8S)
      .filter((f) => f.endsWith('.yaml') && f !== 'kustomization.yaml')
      .sort(),
  );
});

test('Kubernetes: real keel commands, known variables, probes on what each role serves, graceful drain', () => {
  const objects = kubernetesObjects();
  const secret = objects.find((o) => o.kind === 'Secret')!;
  for (const { owner, container } of keelContainers(objects)) {
    const role = container.args[0] as string;
    const where = `${owner.metadata.name}/${container.name}`;
    assert.ok(COMMANDS.has(role), `${where} runs keel ${role}`);
    for (const env of container.env as Obj[]) {
      assert.ok(env.name in ENV_VARS, `${where}: ${env.name} is a variable Keel reads`);
      const ref = env.valueFrom?.secretKeyRef;
      if (ref !== undefined) {
        assert.equal(ref.name, secret.metadata.name);
        assert.ok(ref.key in secret.stringData, `${where}: the secret has ${ref.key}`);
      }
    }
    assert.ok(
      (container.env as Obj[]).some((e) => e.name === 'KEEL_DATABASE_URL'),
      `${where} uses PostgreSQL`,
    );
    if (owner.kind !== 'Deployment') continue;
    // A server is probed on its API port; a worker has no API: on its KEEL_METRICS_PORT listener.
    const portName = container.readinessProbe.httpGet.port;
    const port = (container.ports as Obj[]).find((p) => p.name === portName)!.containerPort;
    if (role === 'server')
      assert.ok(container.args.includes(String(port)), `${where} listens on ${port}`);
    else
      assert.equal(
        (container.env as Obj[]).find((e) => e.name === 'KEEL_METRICS_PORT')?.value,
        String(port),
        `${where} serves its probes on KEEL_METRICS_PORT`,
      );
    assert.equal(container.readinessProbe.httpGet.path, '/readyz');
    assert.equal(container.livenessProbe.httpGet.path, '/healthz');
    assert.ok(
      owner.spec.template.spec.terminationGracePeriodSeconds >= 30,
      `${where} has time to drain`,
    );
  }
  const service = objects.find((o) => o.kind === 'Service')!;
  const server = objects.find((o) => o.metadata.name === 'keel-server')!;
  assert.deepEqual(service.spec.selector, server.spec.selector.matchLabels);
});

test('compose: PostgreSQL, a migration first, one server and two workers, each health-checked', () => {
  const compose = yamlDocuments(join(ROOT, 'deploy', 'compose.yaml'))[0]!;
  const services = compose.services as Record<string, Obj>;
  assert.deepEqual(Object.keys(services).sort(), [
    'migrate',
    'postgres',
    'server',
    'worker-1',
    'worker-2',
  ]);
  assert.equal(services.migrate!.command[0], 'migrate');
  assert.equal(services.migrate!.depends_on.postgres.condition, 'service_healthy');
  for (const name of ['server', 'worker-1', 'worker-2']) {
    const service = services[name]!;
    assert.ok(COMMANDS.has(service.command[0]), `${name} runs keel ${service.command[0]}`);
    assert.equal(service.depends_on.migrate.condition, 'service_completed_successfully');
    assert.equal(service.stop_signal, 'SIGTERM');
    for (const variable of Object.keys(service.environment))
      assert.ok(variable in ENV_VARS, `${name}: ${variable} is a variable Keel reads`);
    const probe = (service.healthcheck.test as string[]).join(' ');
    const port = name === 'server' ? '7070' : service.environment.KEEL_METRICS_PORT;
    assert.match(
      probe,
      new RegExp(`127\\.0\\.0\\.1:${port}/readyz`),
      `${name} is probed where it serves`,
    );
  }
  assert.equal(services.server!.command[0], 'server');
  assert.equal(services['worker-1']!.command[0], 'worker');
});

test('the image: multi-stage on Node 24, the compiled dist/ and production dependencies only, keel as entry point', () => {
  const dockerfile = readFileSync(join(ROOT, 'Dockerfile'), 'utf8');
  const stages = [...dockerfile.matchAll(/^FROM\s+(\S+)/gm)].map((m) => m[1]);
  assert.equal(stages.length, 2);
  // Both stages are on the base image argument (replaceable where docker.io is not reachable), which defaults to
  // the official Node 24 image and is declared before the first FROM, where a FROM can read it.
  for (const image of stages) assert.equal(image, '$' + '{NODE_IMAGE}');
  const arg = /^ARG NODE_IMAGE=(\S+)$/m.exec(dockerfile);
  assert.equal(arg?.[1], 'docker.io/library/node:24-bookworm-slim');
  assert.ok(
    arg!.index < dockerfile.search(/^FROM /m),
    'ARG NODE_IMAGE comes before the first FROM',
  );
  assert.match(dockerfile, /RUN node scripts\/build\.ts && npm prune --omit=dev/);
  assert.match(dockerfile, /COPY --from=build \/app\/dist \.\/dist/);
  assert.match(dockerfile, /^USER node$/m);
  assert.match(dockerfile, /^ENTRYPOINT \["node", "\/app\/bin\/keel\.js"\]$/m);
  // Whatever the image copies from the build context exists.
  for (const [, args] of dockerfile.matchAll(/^COPY (?!--from)(.+)$/gm)) {
    const sources = args!.trim().split(/\s+/).slice(0, -1);
    for (const source of sources) assert.ok(existsSync(join(ROOT, source)), `${source} exists`);
  }
});
