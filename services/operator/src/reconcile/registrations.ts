// What the operator's registrations of kubectl-created CRs ended in, per CR uid and generation, so the
// refusal shows in the CR's conditions. An edit of the CR (a new generation) or the recheck period
// forgets it, and the hostname is registered again.
import type { CustomDomain } from "../custom-domain.js";
import type { RegistrationOutcome } from "./policy.js";

interface Remembered {
  uid: string | undefined;
  generation: number | undefined;
  outcome: RegistrationOutcome;
  at: number;
}

export class Registrations {
  private readonly outcomes = new Map<string, Remembered>();

  constructor(
    /** How long a refusal stands before the hostname is registered again. */
    private readonly recheckMs: number,
  ) {}

  get(cr: CustomDomain | undefined, now: Date): RegistrationOutcome | undefined {
    if (!cr) return undefined;
    const remembered = this.outcomes.get(cr.metadata.name);
    if (!remembered) return undefined;
    const stale =
      remembered.uid !== cr.metadata.uid ||
      remembered.generation !== cr.metadata.generation ||
      now.getTime() - remembered.at >= this.recheckMs;
    if (!stale) return remembered.outcome;
    this.outcomes.delete(cr.metadata.name);
    return undefined;
  }

  set(cr: CustomDomain, outcome: RegistrationOutcome, now: Date): void {
    this.outcomes.set(cr.metadata.name, {
      uid: cr.metadata.uid,
      generation: cr.metadata.generation,
      outcome,
      at: now.getTime(),
    });
  }

  forget(hostname: string): void {
    this.outcomes.delete(hostname);
  }
}
