import { z } from "zod";

/** Workspace names: 1 to 100 characters after trimming (the contract's bound). */
export const workspaceName = z.string().trim().min(1, "must not be empty").max(100, "must be at most 100 characters");

/** Descriptions: at most 1000 characters. */
export const workspaceDescription = z.string().max(1000, "must be at most 1000 characters");

/** Logo URLs: absolute http(s) URLs of at most 2048 characters. */
export const workspaceLogoUrl = z
  .string()
  .max(2048, "must be at most 2048 characters")
  .refine((value) => {
    try {
      const url = new URL(value);
      return (url.protocol === "https:" || url.protocol === "http:") && !url.username && !url.password;
    } catch {
      return false;
    }
  }, "must be an absolute http or https URL without credentials");
