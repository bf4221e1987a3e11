// The console's shell: the sign-in form until a key is accepted, then the account bar, the navigation
// and the page of the current route.
import { useCallback, useEffect, useMemo, useState } from "preact/hooks";
import type { Account } from "@qrplatform/api-client";
import { call, consoleClient, type Quota } from "./api.ts";
import { NewQrCodePage } from "./pages/new-qr-code.tsx";
import { QrCodePage } from "./pages/qr-code.tsx";
import { QrCodesPage } from "./pages/qr-codes.tsx";
import { SignIn } from "./pages/sign-in.tsx";
import { WebhooksPage } from "./pages/webhooks.tsx";
import { WorkspacesPage } from "./pages/workspaces.tsx";
import { navigate, useRoute } from "./router.ts";
import { forgetKey, rememberKey, storedKey } from "./session.ts";
import { ErrorNotice, Link, SessionContext } from "./ui.tsx";

export function App() {
  const [key, setKey] = useState(storedKey);
  const [quota, setQuota] = useState<Quota | undefined>(undefined);
  const api = useMemo(() => (key ? consoleClient(key, setQuota) : undefined), [key]);
  const [account, setAccount] = useState<Account | undefined>(undefined);
  const [accountError, setAccountError] = useState<unknown>(undefined);

  const refreshAccount = useCallback(() => {
    if (!api) return;
    call(api.GET("/account")).then(setAccount, setAccountError);
  }, [api]);
  useEffect(refreshAccount, [refreshAccount]);

  const signIn = async (candidate: string) => {
    const client = consoleClient(candidate, setQuota);
    const accepted = await call(client.GET("/account"));
    rememberKey(candidate);
    setAccount(accepted);
    setKey(candidate);
  };
  const signOut = () => {
    forgetKey();
    setKey(null);
    setAccount(undefined);
    setQuota(undefined);
    navigate("/");
  };

  if (!api) return <SignIn onSignIn={signIn} />;
  return (
    <SessionContext.Provider value={{ api, refreshAccount }}>
      <header class="bar">
        <span class="brand">qr-platform</span>
        <AccountSummary account={account} quota={quota} />
        <button type="button" onClick={signOut}>
          Sign out
        </button>
      </header>
      <Navigation />
      <main id="main">
        <ErrorNotice error={accountError} />
        <Page />
      </main>
    </SessionContext.Provider>
  );
}

function AccountSummary({ account, quota }: { account?: Account; quota?: Quota }) {
  if (!account) return <span class="account">Loading account…</span>;
  const capacity = account.limits.qr_codes;
  return (
    <dl class="account" aria-label="Account">
      <div>
        <dt>Account</dt>
        <dd>{account.name}</dd>
      </div>
      <div>
        <dt>Plan</dt>
        <dd>{account.subscription_tier}</dd>
      </div>
      <div>
        <dt>Capacity used</dt>
        <dd>
          {account.usage.qr_codes ?? "(not counted right now)"} of {capacity ?? "unlimited"} QR codes
        </dd>
      </div>
      <div>
        <dt>Hourly quota left</dt>
        <dd>{quota ? `${quota.remaining} of ${quota.limit} requests` : "…"}</dd>
      </div>
    </dl>
  );
}

const SECTIONS = [
  { route: "/workspaces", label: "Workspaces" },
  { route: "/qr-codes", label: "QR codes" },
  { route: "/webhooks", label: "Webhooks" },
] as const;

function Navigation() {
  const route = useRoute();
  return (
    <nav aria-label="Sections">
      <ul>
        {SECTIONS.map((section) => (
          <li key={section.route}>
            <Link to={section.route} {...(route.startsWith(section.route) && { "aria-current": "page" as const })}>
              {section.label}
            </Link>
          </li>
        ))}
      </ul>
    </nav>
  );
}

function Page() {
  const route = useRoute();
  useEffect(() => {
    if (route === "/") navigate("/workspaces");
  }, [route]);
  const code = /^\/qr-codes\/([0-9a-f-]{36})$/.exec(route);
  if (route === "/workspaces") return <WorkspacesPage />;
  if (route === "/qr-codes") return <QrCodesPage />;
  if (route === "/qr-codes/new") return <NewQrCodePage />;
  if (code) return <QrCodePage id={code[1]!} />;
  if (route === "/webhooks") return <WebhooksPage />;
  if (route === "/") return null;
  return (
    <section>
      <h1>Page not found</h1>
      <p>
        Nothing lives at this address. Go to <Link to="/workspaces">Workspaces</Link>.
      </p>
    </section>
  );
}
