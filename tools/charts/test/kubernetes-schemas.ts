// Checks rendered manifests against the Kubernetes schemas, as the API server would on apply: each kind's
// model from kubernetes-models (required fields, types, enums, formats), and, for built-in kinds, the
// field names @kubernetes/client-node's models know (kubectl's default strict field validation refuses
// unknown fields; kubernetes-models' schemas let them through).
import * as kubernetes from "@kubernetes/client-node";
import type { Model } from "@kubernetes-models/base";
import {
  PodMonitor,
  PrometheusRule,
  ServiceMonitor,
} from "@kubernetes-models/prometheus-operator/monitoring.coreos.com/v1";
import { CustomResourceDefinition } from "kubernetes-models/apiextensions.k8s.io/v1";
import { Deployment } from "kubernetes-models/apps/v1";
import { Ingress } from "kubernetes-models/networking.k8s.io/v1";
import { ClusterRole, ClusterRoleBinding, Role, RoleBinding } from "kubernetes-models/rbac.authorization.k8s.io/v1";
import { ConfigMap, Pod, Service, ServiceAccount } from "kubernetes-models/v1";

type ModelClass = new (data: any) => Model<unknown>;

/**
 * Every kind the chart may render, by apiVersion and kind, with its model and, for built-in kinds, the
 * client-node type that lists its fields. A kind missing here fails the test: add it.
 */
const KINDS: Record<string, { model: ModelClass; fields?: string }> = {
  "v1/ConfigMap": { model: ConfigMap, fields: "V1ConfigMap" },
  "v1/Pod": { model: Pod, fields: "V1Pod" },
  "v1/Service": { model: Service, fields: "V1Service" },
  "v1/ServiceAccount": { model: ServiceAccount, fields: "V1ServiceAccount" },
  "apps/v1/Deployment": { model: Deployment, fields: "V1Deployment" },
  "networking.k8s.io/v1/Ingress": { model: Ingress, fields: "V1Ingress" },
  "rbac.authorization.k8s.io/v1/ClusterRole": { model: ClusterRole, fields: "V1ClusterRole" },
  "rbac.authorization.k8s.io/v1/ClusterRoleBinding": { model: ClusterRoleBinding, fields: "V1ClusterRoleBinding" },
  "rbac.authorization.k8s.io/v1/Role": { model: Role, fields: "V1Role" },
  "rbac.authorization.k8s.io/v1/RoleBinding": { model: RoleBinding, fields: "V1RoleBinding" },
  "apiextensions.k8s.io/v1/CustomResourceDefinition": {
    model: CustomResourceDefinition,
    fields: "V1CustomResourceDefinition",
  },
  // The Prometheus operator's kinds: their models come from its CRDs, which client-node does not know.
  "monitoring.coreos.com/v1/ServiceMonitor": { model: ServiceMonitor },
  "monitoring.coreos.com/v1/PodMonitor": { model: PodMonitor },
  "monitoring.coreos.com/v1/PrometheusRule": { model: PrometheusRule },
};

/** What the API server would refuse in one manifest; empty when it is valid. */
export function schemaProblems(manifest: { apiVersion: string; kind: string; [field: string]: unknown }): string[] {
  const kind = KINDS[`${manifest.apiVersion}/${manifest.kind}`];
  if (!kind) return [`no schema for ${manifest.apiVersion} ${manifest.kind}: add its model to KINDS`];
  const problems: string[] = [];
  try {
    new kind.model(manifest).validate();
  } catch (error) {
    problems.push((error as Error).message);
  }
  if (kind.fields) problems.push(...unknownFields(manifest, kind.fields, "").map((path) => `unknown field ${path}`));
  return problems;
}

type Attribute = { baseName: string; type: string };
const models = kubernetes as unknown as Record<string, { attributeTypeMap?: Attribute[] } | undefined>;

/** The paths in `value` that client-node's type `type` (such as V1Deployment, Array<V1Container>) has no field for. */
function unknownFields(value: unknown, type: string, path: string): string[] {
  if (value === null || typeof value !== "object") return [];
  const array = /^Array<(.+)>$/.exec(type);
  if (array) return (value as unknown[]).flatMap((item, i) => unknownFields(item, array[1]!, `${path}[${i}]`));
  const map = /^\{ \[key: string\]: (.+); \}$/.exec(type);
  if (map) return Object.entries(value).flatMap(([key, item]) => unknownFields(item, map[1]!, `${path}.${key}`));
  // Free-form values (any, object, IntOrString) have no field list.
  const attributes = models[type]?.attributeTypeMap;
  if (!attributes) return [];
  const fields = new Map(attributes.map((attribute) => [attribute.baseName, attribute.type]));
  return Object.entries(value).flatMap(([key, item]) => {
    const fieldType = fields.get(key);
    return fieldType === undefined ? [`${path}.${key}`] : unknownFields(item, fieldType, `${path}.${key}`);
  });
}

/**
 * The fields of a built-in type, such as V1ObjectMeta, each with client-node's type of it ("string",
 * "Date", "V1OwnerReference", ...): what a printer column may read in metadata.
 */
export function fieldsOf(type: string): Record<string, string> {
  const attributes = models[type]?.attributeTypeMap;
  if (!attributes) throw new Error(`client-node has no type ${type}`);
  return Object.fromEntries(attributes.map((attribute) => [attribute.baseName, attribute.type]));
}
