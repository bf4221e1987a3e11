import { create } from "@bufbuild/protobuf";
import { ValidateDesignResponseSchema, type ValidateDesignRequest, type ValidateDesignResponse } from "@qrplatform/api/rendering";
import { invalidArgument } from "@qrplatform/platform";
import { checkDesign } from "./design-rules.js";

/** Answers the normalized design, or fails with INVALID_ARGUMENT naming every invalid field. */
export function validateDesign(req: ValidateDesignRequest): ValidateDesignResponse {
  const { design, problems, premiumFrameFields } = checkDesign(req.design, req.content);
  if (problems.length > 0) {
    const onlyContent = problems.every((p) => p.field === "content");
    throw invalidArgument(problems, onlyContent ? "The content is too long for a QR code at this error-correction level." : "The design is not valid.");
  }
  return create(ValidateDesignResponseSchema, { design, premiumFrameFields });
}
