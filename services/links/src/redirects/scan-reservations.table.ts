/** links.scan_reservations: per link with a scan limit, the counted scans let through to a destination. */
export interface ScanReservationsTable {
  link_id: string;
  reserved: number;
}
