import { availableParallelism } from "node:os";
import { configDefaults, defineConfig } from "vitest/config";

/**
 * Test files whose outcome cannot depend on DATABASE_URL or REDIS_URL: they start no database, no
 * Redis and no platform, and spawn nothing that would. They form the `storage-free` project, which
 * runs with both variables set to values nothing can connect with (STORAGE_POISON), so a file listed
 * here that reaches storage, itself or through a helper or a child process, fails on the embedded
 * default already. CI runs them once, in the embedded pass; the Postgres pass runs only the `storage`
 * project. A new test file is in `storage` unless it is added here.
 * tools/ci/test/storage-projects.test.ts keeps the list honest.
 */
export const STORAGE_FREE = [
  "services/catalog/test/design-checks.test.ts",
  "services/console/test/bundle.test.ts",
  "services/console/test/chart-data.test.ts",
  "services/console/test/csv.test.ts",
  "services/console/test/design.test.ts",
  "services/console/test/new-qr-code.test.ts",
  "services/console/test/qr-code-analytics.test.ts",
  "services/console/test/sign-in.test.ts",
  "services/edge/test/edge-url.test.ts",
  "services/edge/test/exported-images.test.ts",
  "services/edge/test/grpc-errors.test.ts",
  "services/edge/test/idempotency-outcomes.test.ts",
  "services/edge/test/input.test.ts",
  "services/edge/test/request-metrics.test.ts",
  "services/libs/design/test/**/*.test.ts",
  "services/libs/fake-kube-apiserver/test/**/*.test.ts",
  "services/libs/platform/test/free-port.test.ts",
  "services/libs/platform/test/heap-tuning.test.ts",
  "services/libs/platform/test/http-server.test.ts",
  "services/libs/platform/test/invalidated-cache.test.ts",
  "services/libs/platform/test/metrics.test.ts",
  "services/libs/platform/test/page-token.test.ts",
  "services/libs/platform/test/periodic-pass.test.ts",
  "services/libs/platform/test/sampler.test.ts",
  "services/libs/platform/test/telemetry-off.test.ts",
  "services/libs/platform/test/text.test.ts",
  "services/libs/platform/test/transport-failures.test.ts",
  "services/libs/platform/test/vocabulary.test.ts",
  "services/links/test/classify.test.ts",
  "services/links/test/rules.test.ts",
  "services/links/test/scan-columns.test.ts",
  "services/links/test/visitor-sketch.test.ts",
  "services/operator/test/backoff.test.ts",
  "services/operator/test/conditions.test.ts",
  "services/operator/test/controller.test.ts",
  "services/operator/test/domain-cache.test.ts",
  "services/operator/test/names.test.ts",
  "services/operator/test/policy.test.ts",
  "services/operator/test/process.test.ts",
  "services/operator/test/registration.test.ts",
  "services/operator/test/schedules.test.ts",
  "services/operator/test/work-queue.test.ts",
  "services/rendering/test/**/*.test.ts",
  "tools/charts/test/custom-domain-crd.test.ts",
  "tools/charts/test/operator.test.ts",
  "tools/ci/test/**/*.test.ts",
  "tools/docs/test/configuration.test.ts",
  "tools/docs/test/links.test.ts",
  "tools/qrctl/test/csv-import.test.ts",
];

/**
 * What DATABASE_URL and REDIS_URL hold in the storage-free project: not URLs at all, so a config
 * schema refuses them, a client throws on them, and a test that only checks whether they are set
 * takes the storage branch and fails with the first connection.
 */
export const STORAGE_POISON = "storage-free test file (see STORAGE_FREE in vitest.config.ts)";

const ALL = ["services/**/test/**/*.test.ts", "tools/**/test/**/*.test.ts"];

// One suite for the whole repository. Tests reach Postgres and Redis only through DATABASE_URL and
// REDIS_URL; without them every test runs on the embedded default (PGlite, in-process stores).
export default defineConfig({
  test: {
    testTimeout: 30_000,
    hookTimeout: 60_000,
    pool: "forks",
    // vitest's default (one worker fewer than the cores) runs one file at a time on a 2-core machine such
    // as CI's, while most files spend their time waiting on processes, timers and sockets; freePort()
    // gives each worker ports of its own.
    maxWorkers: Math.max(2, availableParallelism() - 1),
    globalSetup: ["tools/build/test-setup.ts"],
    env: { LOG_LEVEL: process.env.LOG_LEVEL ?? "silent" },
    projects: [
      { extends: true, test: { name: "storage", include: ALL, exclude: [...configDefaults.exclude, ...STORAGE_FREE] } },
      {
        extends: true,
        test: {
          name: "storage-free",
          include: STORAGE_FREE,
          env: { DATABASE_URL: STORAGE_POISON, REDIS_URL: STORAGE_POISON },
        },
      },
    ],
  },
});
