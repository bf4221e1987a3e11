// Stand-in for @qrplatform/routing's password hash until it is merged.
import { randomBytes, scrypt } from "node:crypto";

export async function hashPassword(password: string): Promise<string> {
  const salt = randomBytes(16);
  const key = await new Promise<Buffer>((resolve, reject) =>
    scrypt(password, salt, 32, (error, derived) => (error ? reject(error) : resolve(derived))),
  );
  return `scrypt$${salt.toString("base64")}$${key.toString("base64")}`;
}
