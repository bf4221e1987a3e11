import { useEffect, useRef, useState } from "preact/hooks";
import { ApiError, call, idempotencyKey } from "../api.ts";
import {
  CORNER_SHAPES,
  DEFAULT_DESIGN,
  type DesignForm,
  designControlOf,
  ERROR_CORRECTIONS,
  FRAME_TYPES,
  MODULE_STYLES,
  toDesignInput,
} from "../design.ts";
import { drawPreview } from "../preview.ts";
import { navigate } from "../router.ts";
import { allWorkspaces } from "../workspaces.ts";
import { ErrorNotice, FieldError, fieldProblems, useLoad, useSession } from "../ui.tsx";

/** How long the editor waits after the last change before drawing: one preview per pause, not per keystroke. */
const PREVIEW_DEBOUNCE_MS = 600;

/** The refusals of a design, by editor control; premium_frames_required names no field, so it is the frame's. */
function designProblems(error: unknown): Partial<Record<keyof DesignForm, string>> {
  if (!(error instanceof ApiError)) return {};
  if (error.code === "premium_frames_required") return { frameType: error.message };
  const problems: Partial<Record<keyof DesignForm, string>> = {};
  for (const field of error.fields) {
    const control = designControlOf(field.field);
    if (control) problems[control] = field.message;
  }
  return problems;
}

export function NewQrCodePage() {
  const { api, refreshAccount } = useSession();
  const workspaces = useLoad(() => allWorkspaces(api), [api]);
  const [name, setName] = useState("");
  const [destination, setDestination] = useState("");
  const [tags, setTags] = useState("");
  const [utm, setUtm] = useState({ source: "", medium: "", campaign: "" });
  const [workspaceId, setWorkspaceId] = useState("");
  const [design, setDesign] = useState<DesignForm>(DEFAULT_DESIGN);
  const [previewUrl, setPreviewUrl] = useState<string | undefined>(undefined);
  const [previewError, setPreviewError] = useState<unknown>(undefined);
  const [drawing, setDrawing] = useState(false);
  const [createError, setCreateError] = useState<unknown>(undefined);
  const target = workspaceId || workspaces.data?.[0]?.id || "";

  // The object URL of the image shown, released when a newer one replaces it and with the page.
  const shown = useRef<string | undefined>(undefined);
  useEffect(() => () => shown.current && URL.revokeObjectURL(shown.current), []);

  // One preview at a time: a newer design abandons the drawing of the one before it.
  useEffect(() => {
    let current = true;
    const abandoned = new AbortController();
    const timer = setTimeout(async () => {
      setDrawing(true);
      try {
        const image = await drawPreview(api, toDesignInput(design), { signal: abandoned.signal });
        if (!current) return;
        if (shown.current) URL.revokeObjectURL(shown.current);
        shown.current = URL.createObjectURL(image);
        setPreviewUrl(shown.current);
        setPreviewError(undefined);
      } catch (error) {
        if (current) setPreviewError(error);
      } finally {
        if (current) setDrawing(false);
      }
    }, PREVIEW_DEBOUNCE_MS);
    return () => {
      current = false;
      clearTimeout(timer);
      abandoned.abort();
    };
  }, [api, design]);
  const problems = { ...fieldProblems(createError) };
  const designRefusals = { ...designProblems(previewError), ...designProblems(createError) };
  const set = <K extends keyof DesignForm>(key: K, value: DesignForm[K]) => setDesign((d) => ({ ...d, [key]: value }));

  const create = async (event: Event) => {
    event.preventDefault();
    try {
      const tagList = tags
        .split(",")
        .map((tag) => tag.trim())
        .filter(Boolean);
      const utmSet = Object.fromEntries(Object.entries(utm).filter(([, value]) => value.trim()));
      const code = await call(
        api.POST("/workspaces/{workspace_id}/qr-codes", {
          params: { path: { workspace_id: target }, header: { "Idempotency-Key": idempotencyKey() } },
          body: {
            name,
            destination_url: destination,
            design: toDesignInput(design),
            ...(tagList.length > 0 && { tags: tagList }),
            ...(Object.keys(utmSet).length > 0 && { utm: utmSet }),
          },
        }),
      );
      refreshAccount();
      navigate(`/qr-codes/${code.id}`);
    } catch (error) {
      setCreateError(error);
    }
  };

  const describedBy = (id: string, message: string | undefined) =>
    message ? { "aria-invalid": true, "aria-describedby": `${id}-error` } : {};
  const otherError =
    createError instanceof ApiError && createError.fields.length === 0 && createError.code !== "premium_frames_required"
      ? createError
      : undefined;

  return (
    <section aria-labelledby="new-code-heading">
      <h1 id="new-code-heading">New QR code</h1>
      <ErrorNotice error={workspaces.error} />
      {workspaces.data?.length === 0 && <p>Create a workspace first: every QR code is made in one.</p>}
      <form onSubmit={create} class="editor">
        <fieldset>
          <legend>Link</legend>
          <label for="code-name">Name</label>
          <input
            id="code-name"
            required
            maxLength={200}
            value={name}
            onInput={(e) => setName(e.currentTarget.value)}
            {...describedBy("code-name", problems.name)}
          />
          <FieldError id="code-name-error" message={problems.name} />
          <label for="code-destination">Destination URL</label>
          <input
            id="code-destination"
            type="url"
            required
            value={destination}
            onInput={(e) => setDestination(e.currentTarget.value)}
            {...describedBy("code-destination", problems.destination_url)}
          />
          <FieldError id="code-destination-error" message={problems.destination_url} />
          <label for="code-tags">Tags (separated by commas)</label>
          <input
            id="code-tags"
            value={tags}
            onInput={(e) => setTags(e.currentTarget.value)}
            {...describedBy("code-tags", problems.tags)}
          />
          <FieldError id="code-tags-error" message={problems.tags} />
          {(["source", "medium", "campaign"] as const).map((part) => (
            <div key={part}>
              <label for={`code-utm-${part}`}>UTM {part}</label>
              <input
                id={`code-utm-${part}`}
                value={utm[part]}
                onInput={(e) => setUtm({ ...utm, [part]: e.currentTarget.value })}
                {...describedBy(`code-utm-${part}`, problems[`utm.${part}`])}
              />
              <FieldError id={`code-utm-${part}-error`} message={problems[`utm.${part}`]} />
            </div>
          ))}
          <label for="code-workspace-pick">Workspace</label>
          <select id="code-workspace-pick" value={target} onChange={(e) => setWorkspaceId(e.currentTarget.value)}>
            {workspaces.data?.map((workspace) => (
              <option key={workspace.id} value={workspace.id}>
                {workspace.name}
              </option>
            ))}
          </select>
        </fieldset>
        <DesignEditor design={design} set={set} refusals={designRefusals} />
        <div class="preview" aria-live="polite">
          <h2>Preview</h2>
          {previewUrl ? <img src={previewUrl} alt="QR code preview" width={256} height={256} /> : <p>Drawing…</p>}
          <p class="help">
            {drawing ? "Drawing the new design…" : "The preview is the platform's own export of this design."}
          </p>
          {previewError && Object.keys(designProblems(previewError)).length === 0 ? (
            <ErrorNotice error={previewError} />
          ) : null}
        </div>
        <ErrorNotice error={otherError} />
        <button type="submit" disabled={!target}>
          Create
        </button>
      </form>
    </section>
  );
}

function DesignEditor({
  design,
  set,
  refusals,
}: {
  design: DesignForm;
  set: <K extends keyof DesignForm>(key: K, value: DesignForm[K]) => void;
  refusals: Partial<Record<keyof DesignForm, string>>;
}) {
  const refusal = (key: keyof DesignForm) => <FieldError id={`design-${key}-error`} message={refusals[key]} />;
  const aria = (key: keyof DesignForm) =>
    refusals[key] ? { "aria-invalid": true, "aria-describedby": `design-${key}-error` } : {};
  const select = <K extends keyof DesignForm>(
    key: K,
    label: string,
    options: readonly string[],
    extra?: [string, string],
  ) => (
    <div>
      <label for={`design-${key}`}>{label}</label>
      <select
        id={`design-${key}`}
        value={String(design[key])}
        onChange={(e) => set(key, e.currentTarget.value as DesignForm[K])}
        {...aria(key)}
      >
        {extra && <option value={extra[0]}>{extra[1]}</option>}
        {options.map((option) => (
          <option key={option} value={option}>
            {option}
          </option>
        ))}
      </select>
      {refusal(key)}
    </div>
  );
  const colour = (key: "foreground" | "background" | "frameColor", label: string) => (
    <div>
      <label for={`design-${key}`}>{label}</label>
      <input
        id={`design-${key}`}
        type="color"
        value={design[key]}
        onInput={(e) => set(key, e.currentTarget.value)}
        {...aria(key)}
      />
      {refusal(key)}
    </div>
  );
  return (
    <fieldset>
      <legend>Design</legend>
      {colour("foreground", "Foreground colour")}
      {colour("background", "Background colour")}
      {select("style", "Module style", MODULE_STYLES)}
      {select("cornerSquareShape", "Corner square shape", CORNER_SHAPES)}
      {select("cornerDotShape", "Corner dot shape", CORNER_SHAPES)}
      {select("errorCorrection", "Error correction", ERROR_CORRECTIONS, ["", "Automatic (M, or H with a logo)"])}
      <div>
        <input
          id="design-frameEnabled"
          type="checkbox"
          checked={design.frameEnabled}
          onChange={(e) => set("frameEnabled", e.currentTarget.checked)}
        />
        <label for="design-frameEnabled">Frame</label>
        {refusal("frameEnabled")}
      </div>
      {design.frameEnabled && (
        <>
          {select("frameType", "Frame shape", FRAME_TYPES)}
          {colour("frameColor", "Frame colour")}
          <label for="design-labelTop">Top label</label>
          <input
            id="design-labelTop"
            maxLength={30}
            value={design.labelTop}
            onInput={(e) => set("labelTop", e.currentTarget.value)}
            {...aria("labelTop")}
          />
          {refusal("labelTop")}
          <label for="design-labelBottom">Bottom label</label>
          <input
            id="design-labelBottom"
            maxLength={30}
            value={design.labelBottom}
            onInput={(e) => set("labelBottom", e.currentTarget.value)}
            {...aria("labelBottom")}
          />
          {refusal("labelBottom")}
        </>
      )}
      <label for="design-logoUrl">Logo URL (PNG or JPEG)</label>
      <input
        id="design-logoUrl"
        type="url"
        value={design.logoUrl}
        onInput={(e) => set("logoUrl", e.currentTarget.value)}
        {...aria("logoUrl")}
      />
      {refusal("logoUrl")}
      <label for="design-logoScale">Logo scale</label>
      <input
        id="design-logoScale"
        type="number"
        min={0.1}
        max={0.3}
        step={0.05}
        value={design.logoScale}
        onInput={(e) => set("logoScale", e.currentTarget.value)}
        {...aria("logoScale")}
      />
      {refusal("logoScale")}
    </fieldset>
  );
}
