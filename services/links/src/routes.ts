import type { ConnectRouter } from "@connectrpc/connect";
import { AnalyticsService, DomainService, LinkService, RedirectService } from "@qrplatform/api/links";

/**
 * Registers the links services. Their methods arrive with the QR-code, redirect and analytics work;
 * until a method is implemented here, Connect answers it with UNIMPLEMENTED.
 */
export function registerRoutes(router: ConnectRouter): void {
  router.service(LinkService, {});
  router.service(DomainService, {});
  router.service(RedirectService, {});
  router.service(AnalyticsService, {});
}
