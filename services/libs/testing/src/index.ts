// What the tests share. Heavier helpers have entries of their own (decoders, dns-server, huge-png,
// local-services, platform-process) so a test loads only what it uses.
export * from "./credentials.js";
export * from "./migrated-platform.js";
export * from "./otlp-receiver.js";
export * from "./processes.js";
export * from "./qrctl.js";
