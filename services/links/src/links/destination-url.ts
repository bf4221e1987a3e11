import { textProblem, type FieldProblem } from "@qrplatform/platform";

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
