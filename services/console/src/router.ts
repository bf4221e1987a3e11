// Client routes under /console/, on the History API: the edge answers every such path with index.html.
import { useEffect, useState } from "preact/hooks";

export const BASE = "/console";

/** The route part of the current location: "/qr-codes/…" for /console/qr-codes/…. */
export function currentRoute(): string {
  const path = location.pathname.startsWith(BASE) ? location.pathname.slice(BASE.length) : location.pathname;
  return path === "" ? "/" : path;
}

/** Goes to a route of the console without reloading the page. */
export function navigate(route: string): void {
  history.pushState(null, "", `${BASE}${route}`);
  dispatchEvent(new PopStateEvent("popstate"));
}

/** The current route, re-rendering when it changes. */
export function useRoute(): string {
  const [route, setRoute] = useState(currentRoute);
  useEffect(() => {
    const update = () => setRoute(currentRoute());
    addEventListener("popstate", update);
    return () => removeEventListener("popstate", update);
  }, []);
  return route;
}

/** A link's click handler that stays in the page for a plain left click, as a browser's own link would. */
export function followLink(route: string) {
  return (event: MouseEvent) => {
    if (event.button !== 0 || event.metaKey || event.ctrlKey || event.shiftKey || event.altKey) return;
    event.preventDefault();
    navigate(route);
  };
}
