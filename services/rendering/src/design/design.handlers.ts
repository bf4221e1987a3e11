import { create } from "@bufbuild/protobuf";
import {
  ValidateDesignResponseSchema,
  type Design,
  type ValidateDesignRequest,
  type ValidateDesignResponse,
} from "@qrplatform/api/rendering";
import { invalidArgument, type FieldProblem } from "@qrplatform/platform";
import { fetchLogo, type LogoFetchOptions } from "../logo/fetch-logo.js";
import { checkDesign, MAX_LOGO_URL_LENGTH } from "./design-rules.js";
import { dataUriPixelProblem } from "./logo-data-uri.js";

/**
 * Answers the normalized design, or fails with INVALID_ARGUMENT naming every invalid field, the pixels
 * a logo decodes to included. A logo given
 * by URL is fetched here, once: the answer holds its bytes, so nothing fetches it again.
 */
export async function validateDesign(
  req: ValidateDesignRequest,
  logoFetch: LogoFetchOptions = {},
): Promise<ValidateDesignResponse> {
  const fetchProblems = await fetchLogoOf(req.design, logoFetch);
  const { design, problems, premiumFrameFields } = checkDesign(req.design, req.content);
  const all = [...fetchProblems, ...problems];
  if (design.logo?.dataUri && !all.some((p) => p.field === "design.logo.data_uri" || p.field === "design.logo.url")) {
    const pixels = await dataUriPixelProblem(design.logo.dataUri);
    // A fetched logo's problem is the URL's: that is the field the client gave.
    if (pixels) all.push({ field: req.design?.logo?.url ? "design.logo.url" : "design.logo.data_uri", ...pixels });
  }
  if (all.length > 0) {
    const onlyContent = all.every((p) => p.field === "content");
    throw invalidArgument(
      all,
      onlyContent
        ? "The content is too long for a QR code at this error-correction level."
        : "The design is not valid.",
    );
  }
  return create(ValidateDesignResponseSchema, { design, premiumFrameFields });
}

/** Fills in the image of a logo given only by URL; a URL that cannot be fetched becomes a problem on design.logo.url. */
async function fetchLogoOf(design: Design | undefined, options: LogoFetchOptions): Promise<FieldProblem[]> {
  const logo = design?.logo;
  if (logo?.dataUri !== "" || logo.url === "" || logo.url.length > MAX_LOGO_URL_LENGTH) return [];
  const fetched = await fetchLogo(logo.url, options);
  if ("reason" in fetched)
    return [{ field: "design.logo.url", reason: fetched.reason, description: fetched.description }];
  logo.dataUri = fetched.dataUri;
  return [];
}
