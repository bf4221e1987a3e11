import { textProblem, textRuleProblem, type FieldProblem } from "@qrplatform/platform";

export const MAX_DESTINATION_LENGTH = 2048;

/**
 * Why a destination URL is unacceptable, or undefined when it is fine: an absolute http or https URL
 * of at most 2048 characters with a host, no user name or password, and no control characters.
 */
export function destinationUrlProblem(value: string, field = "destination_url"): FieldProblem | undefined {
  const problem = (reason: string, description: string) => ({ field, reason, description });
  if (value.length === 0) return problem("required", "is required");
  if (value.length > MAX_DESTINATION_LENGTH) return problem("too_long", `must be at most ${MAX_DESTINATION_LENGTH} characters`);
  // The one text rule: no control character (CR, LF and TAB among them) may reach a Location header.
  const text = textRuleProblem(value);
  if (text) return problem(text.reason, text.description);
  if (value.trim() !== value) return problem("invalid_url", "must not start or end with spaces");
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return problem("invalid_url", "must be an absolute URL such as https://example.com/page");
  }
  if (url.protocol !== "https:" && url.protocol !== "http:") return problem("unsupported_scheme", "must be an http or https URL");
  if (url.hostname === "") return problem("invalid_url", "must have a host");
  if (url.username !== "" || url.password !== "") return problem("credentials_not_allowed", "must not contain a user name or password");
  return undefined;
}

export const MAX_QUERY_PARAMETERS = 20;

/** Problems with the query parameters a link sets on its destination. */
export function queryParameterProblems(parameters: Record<string, string>): FieldProblem[] {
  const problem = (description: string) => ({ field: "query_parameters", reason: "invalid_value", description });
  const entries = Object.entries(parameters);
  if (entries.length > MAX_QUERY_PARAMETERS) return [problem(`must have at most ${MAX_QUERY_PARAMETERS} entries`)];
  return entries.flatMap(([name, value]) => {
    if (name.length < 1 || name.length > 100) return [problem("names must be 1 to 100 characters")];
    if (value.length > 1000) return [problem(`the value of "${name}" must be at most 1000 characters`)];
    if (textProblem(name) || textProblem(value)) return [problem(`"${name}" must not contain control characters`)];
    return [];
  });
}

/**
 * The URL a visitor is sent to: the destination with the link's parameters set, replacing any of the
 * same name. A destination without parameters to add is returned in its normalised form unchanged.
 */
export function redirectLocation(destination: string, parameters: Record<string, string>): string {
  const url = new URL(destination);
  for (const [name, value] of Object.entries(parameters)) url.searchParams.set(name, value);
  return url.href;
}
