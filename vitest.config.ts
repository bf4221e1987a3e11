import { defineConfig } from "vitest/config";

// One suite for the whole repository. Tests reach Postgres and Redis only through DATABASE_URL and
// REDIS_URL; without them every test runs on the embedded default (PGlite, in-process stores).
export default defineConfig({
  test: {
    include: ["services/**/test/**/*.test.ts", "tools/**/test/**/*.test.ts"],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    pool: "forks",
    globalSetup: ["tools/build/test-setup.ts"],
    env: { LOG_LEVEL: process.env.LOG_LEVEL ?? "silent" },
  },
});
