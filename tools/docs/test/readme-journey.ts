// Reads the README's journey block: commands, each followed by `#` lines giving what it prints.

/** One command of the journey and the output it documents. */
export interface JourneyStep {
  /** The command as written, continuation lines joined. */
  command: string;
  /** The `#` lines after it, without the `# `. */
  expected: string[];
}

const START = "<!-- journey:start -->";
const END = "<!-- journey:end -->";

/** The steps of the fenced block between the journey markers. */
export function journeySteps(readme: string): JourneyStep[] {
  const start = readme.indexOf(START);
  const end = readme.indexOf(END);
  if (start < 0 || end < start) throw new Error(`the README has no block between ${START} and ${END}`);
  const block = /```sh\n([\s\S]*?)```/.exec(readme.slice(start, end))?.[1];
  if (!block) throw new Error("the journey markers hold no ```sh block");
  const steps: JourneyStep[] = [];
  let pending = "";
  for (const line of block.split("\n")) {
    if (line.startsWith("#")) {
      const step = steps.at(-1);
      if (!step) throw new Error(`output before any command: ${line}`);
      step.expected.push(line.replace(/^# ?/, ""));
    } else if (line.trim() !== "") {
      pending += line.replace(/\\$/, " ").trim() + (line.endsWith("\\") ? " " : "");
      if (!line.endsWith("\\")) {
        steps.push({ command: pending.replace(/\s+/g, " ").trim(), expected: [] });
        pending = "";
      }
    }
  }
  return steps;
}

/** Placeholders such as `<workspace id>`, as the README writes values a step printed. */
const PLACEHOLDER = /<([a-z][a-z ]*)>/g;

/** The command with every known placeholder replaced; throws on one no earlier step printed. */
export function substitute(text: string, values: ReadonlyMap<string, string>): string {
  return text.replace(PLACEHOLDER, (whole, name: string) => {
    const value = values.get(name);
    if (value === undefined) throw new Error(`${whole} is used before a step prints it`);
    return value;
  });
}

/**
 * Matches a step's documented JSON against what it printed: objects field by field (`…` stands for
 * fields left out), arrays element by element; a string `<name>` captures the value into `values`,
 * or must equal it when an earlier step captured it. Returns the first mismatch, or undefined.
 */
export function matchJson(pattern: string, actualText: string, values: Map<string, string>): string | undefined {
  const expected: unknown = JSON.parse(pattern.replace(/,\s*…/g, "").replace(/…\s*,?/g, ""));
  let actual: unknown;
  try {
    actual = JSON.parse(actualText);
  } catch {
    return `printed no JSON: ${actualText}`;
  }
  const captured = new Map<string, string>();
  const mismatch = matchValue(expected, actual, "$", values, captured);
  if (mismatch === undefined) for (const [name, value] of captured) values.set(name, value);
  return mismatch;
}

function matchValue(
  expected: unknown,
  actual: unknown,
  path: string,
  known: ReadonlyMap<string, string>,
  captured: Map<string, string>,
): string | undefined {
  if (typeof expected === "string") {
    const placeholder = /^<([a-z][a-z ]*)>$/.exec(expected)?.[1];
    if (placeholder !== undefined) {
      if (typeof actual !== "string")
        return `${path}: expected a string for <${placeholder}>, got ${JSON.stringify(actual)}`;
      const value = known.get(placeholder) ?? captured.get(placeholder);
      if (value !== undefined && value !== actual)
        return `${path}: expected <${placeholder}> = ${value}, got ${actual}`;
      captured.set(placeholder, actual);
      return undefined;
    }
  }
  if (Array.isArray(expected)) {
    if (!Array.isArray(actual) || actual.length !== expected.length)
      return `${path}: expected ${expected.length} elements, got ${JSON.stringify(actual)}`;
    for (const [i, element] of expected.entries()) {
      const mismatch = matchValue(element, actual[i], `${path}[${i}]`, known, captured);
      if (mismatch) return mismatch;
    }
    return undefined;
  }
  if (expected !== null && typeof expected === "object") {
    if (actual === null || typeof actual !== "object" || Array.isArray(actual))
      return `${path}: expected an object, got ${JSON.stringify(actual)}`;
    for (const [key, value] of Object.entries(expected)) {
      if (!(key in actual)) return `${path}.${key}: missing`;
      const mismatch = matchValue(value, (actual as Record<string, unknown>)[key], `${path}.${key}`, known, captured);
      if (mismatch) return mismatch;
    }
    return undefined;
  }
  return Object.is(expected, actual)
    ? undefined
    : `${path}: expected ${JSON.stringify(expected)}, got ${JSON.stringify(actual)}`;
}
