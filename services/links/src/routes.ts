import type { ConnectRouter } from "@connectrpc/connect";
import { AnalyticsService, DomainService, LinkService, OutboxService, RedirectService } from "@qrplatform/api/links";
import type { LinksDeps } from "./deps.js";
import {
  createDomain,
  deleteDomain,
  getDomain,
  listDomains,
  reportDomainServing,
  verifyDomain,
  watchDomains,
} from "./domains/domains.handlers.js";
import { createLink, deleteLink, getLink, resolveLinkForVisitor, updateLink } from "./links/links.handlers.js";
import { acknowledgeOutboxEvents, listOutboxEvents } from "./outbox/outbox.handlers.js";
import { resolveRedirect } from "./redirects/redirects.handlers.js";
import { getLinkAnalytics, getScanTotals, recordScans } from "./scans/analytics/scans.handlers.js";

/** Registers the links services: short links, custom domains, redirects, scan analytics and the outbox of events. */
export function registerRoutes(router: ConnectRouter, deps: LinksDeps): void {
  router.service(LinkService, {
    createLink: (req) => createLink(deps, req),
    getLink: (req) => getLink(deps, req),
    updateLink: (req) => updateLink(deps, req),
    deleteLink: (req) => deleteLink(deps, req),
    resolveLinkForVisitor: (req) => resolveLinkForVisitor(deps, req),
  });
  router.service(DomainService, {
    createDomain: (req) => createDomain(deps, req),
    getDomain: (req, context) => getDomain(deps, req, context),
    listDomains: (req, context) => listDomains(deps, req, context),
    verifyDomain: (req, context) => verifyDomain(deps, req, context),
    deleteDomain: (req, context) => deleteDomain(deps, req, context),
    watchDomains: (req, context) => watchDomains(deps, req, context),
    reportDomainServing: (req, context) => reportDomainServing(deps, req, context),
  });
  router.service(RedirectService, {
    resolveRedirect: (req) => resolveRedirect(deps, req),
    recordScans: (req) => recordScans(deps, req),
  });
  router.service(AnalyticsService, {
    getLinkAnalytics: (req) => getLinkAnalytics(deps, req),
    getScanTotals: (req) => getScanTotals(deps, req),
  });
  router.service(OutboxService, {
    listOutboxEvents: (req) => listOutboxEvents(deps, req),
    acknowledgeOutboxEvents: (req) => acknowledgeOutboxEvents(deps, req),
  });
}
