// Stand-in for @qrplatform/routing until its validator and password hash are merged.
import { randomBytes, scrypt } from "node:crypto";
import type { FieldProblem } from "@qrplatform/platform";

export function routingProblems(_json: Record<string, unknown>): FieldProblem[] {
  return [];
}

export async function hashPassword(password: string): Promise<string> {
  const salt = randomBytes(16);
  const key = await new Promise<Buffer>((resolve, reject) =>
    scrypt(password, salt, 32, (error, derived) => (error ? reject(error) : resolve(derived))),
  );
  return `scrypt$${salt.toString("base64")}$${key.toString("base64")}`;
}
