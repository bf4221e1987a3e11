// Gathers what the decision for one hostname reads: from the informers' caches and the domain cache,
// plus the one read no informer covers (the operator may only get Secrets, not list or watch them).
import { DomainState } from "@qrplatform/api/links";
import { childNames, isBound, type CustomDomain } from "../custom-domain.js";
import type { DomainCache } from "../domains/domain-cache.js";
import type { KubeApi } from "../kube/client.js";
import type { ResourceInformer } from "../kube/informer.js";
import { hostsOf, isControlledBy, type Certificate, type Route } from "../kube/objects.js";
import type { ProvisioningSettings } from "./children.js";
import type { ReconcileInputs } from "./policy.js";
import type { Registrations } from "./registrations.js";

/** Where the inputs come from. */
export interface Sources {
  customDomains: ResourceInformer<CustomDomain>;
  routes: ResourceInformer<Route>;
  certificates: ResourceInformer<Certificate>;
  domains: DomainCache;
  registrations: Registrations;
  api: KubeApi;
  settings: ProvisioningSettings;
  now: () => Date;
}

export async function gather(hostname: string, sources: Sources): Promise<ReconcileInputs> {
  const { settings } = sources;
  const now = sources.now();
  const names = childNames(hostname);
  const customDomain = sources.customDomains.get(hostname);
  const domain = sources.domains.forHostname(hostname);
  // In ingress-annotation mode the Certificate is cert-manager's, named after the secret.
  const certificateName = settings.tls.mode === "ingress-annotation" ? names.secret : names.certificate;
  const routes = sources.routes.list();
  const certificates = sources.certificates.list();
  const certificate = sources.certificates.get(certificateName);
  const uid = customDomain?.metadata.uid;
  return {
    hostname,
    customDomain,
    domainsListed: sources.domains.listed,
    domain,
    registration: sources.registrations.get(customDomain, now),
    route: sources.routes.get(names.route),
    otherRoutesForHost: routes.filter(
      (route) => route.metadata.name !== names.route && hostsOf(route).includes(hostname),
    ),
    certificate,
    otherCertificatesForSecret: certificates.filter(
      (other) => other.metadata.name !== certificateName && other.spec?.secretName === names.secret,
    ),
    secret: needsSecret(customDomain, domain?.state, certificate)
      ? await sources.api.readSecret(names.secret)
      : undefined,
    ownedChildren: uid ? [...routes, ...certificates].filter((child) => isControlledBy(child, uid)) : [],
    settings,
    now,
  };
}

/**
 * The Secret matters only until the certificate is issued: before that, a Secret of that name that
 * cert-manager did not write for our Certificate means someone else's key pair would be replaced.
 */
function needsSecret(
  customDomain: CustomDomain | undefined,
  state: DomainState | undefined,
  certificate: Certificate | undefined,
): boolean {
  if (
    !customDomain ||
    !isBound(customDomain) ||
    customDomain.metadata.deletionTimestamp ||
    state !== DomainState.VERIFIED
  )
    return false;
  return certificate?.status?.conditions?.find((condition) => condition.type === "Ready")?.status !== "True";
}
