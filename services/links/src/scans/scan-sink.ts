import type { ScanColumns } from "./scan-columns.js";

/**
 * The one way scans leave the links service for storage, between the recording and analytics rooms.
 * ScanWriter (PostgreSQL or PGlite) is its implementation; a columnar store that takes the raw events
 * past one PostgreSQL's reach would be another behind the same contract (ADR 0014).
 */
export interface ScanSink {
  /**
   * Stores a batch whose scans keep the scan rules, exactly once whatever the retries; resolves once it
   * is committed, to how many of its scans were new. A rejected batch changed nothing and may be sent
   * again.
   */
  store(scans: ScanColumns): Promise<number>;
}
