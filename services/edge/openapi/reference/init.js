// Starts Swagger UI on the /docs page. The document's URL comes from the page's data attribute, so the
// page needs no inline script; nothing is fetched from another host (the online validator is off).
/* global SwaggerUIBundle */
const root = document.getElementById("swagger-ui");
window.ui = SwaggerUIBundle({
  url: root.dataset.openapiUrl,
  domNode: root,
  deepLinking: true,
  validatorUrl: null,
  presets: [SwaggerUIBundle.presets.apis],
  layout: "BaseLayout",
});
