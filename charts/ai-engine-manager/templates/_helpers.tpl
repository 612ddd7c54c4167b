{{/* Names, labels and settings shared by the templates. */}}

{{/* The chart's name, or nameOverride. */}}
{{- define "ai-engine-manager.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/*
The prefix of every object name: <release>-<chart>, or the release name alone when it already
holds the chart's name. Trimmed so that "-gateway" and "-operator" still fit in 63 characters.
*/}}
{{- define "ai-engine-manager.fullname" -}}
{{- if .Values.fullnameOverride }}
{{- .Values.fullnameOverride | trunc 53 | trimSuffix "-" }}
{{- else }}
{{- $name := default .Chart.Name .Values.nameOverride }}
{{- if contains $name .Release.Name }}
{{- .Release.Name | trunc 53 | trimSuffix "-" }}
{{- else }}
{{- printf "%s-%s" .Release.Name $name | trunc 53 | trimSuffix "-" }}
{{- end }}
{{- end }}
{{- end }}

{{- define "ai-engine-manager.gatewayName" -}}
{{ include "ai-engine-manager.fullname" . }}-gateway
{{- end }}

{{- define "ai-engine-manager.operatorName" -}}
{{ include "ai-engine-manager.fullname" . }}-operator
{{- end }}

{{/* The labels of every object. */}}
{{- define "ai-engine-manager.labels" -}}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
app.kubernetes.io/name: {{ include "ai-engine-manager.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
app.kubernetes.io/part-of: ai-engine-manager
{{- end }}

{{/* Labels that select one component's pods; call with (dict "root" $ "component" "gateway"). */}}
{{- define "ai-engine-manager.selectorLabels" -}}
app.kubernetes.io/name: {{ include "ai-engine-manager.name" .root }}
app.kubernetes.io/instance: {{ .root.Release.Name }}
app.kubernetes.io/component: {{ .component }}
{{- end }}

{{/* The labels of one component's objects; same argument as selectorLabels. */}}
{{- define "ai-engine-manager.componentLabels" -}}
{{ include "ai-engine-manager.labels" .root }}
app.kubernetes.io/component: {{ .component }}
{{- end }}

{{/* The metadata the chart adds to each generated CRD. */}}
{{- define "ai-engine-manager.crdMetadata" -}}
labels:
  {{- include "ai-engine-manager.labels" . | nindent 2 }}
{{- if .Values.crds.keep }}
annotations:
  # Deleting a CRD deletes every resource of its kind: uninstalling the release keeps them.
  helm.sh/resource-policy: keep
{{- end }}
{{- end }}

{{- define "ai-engine-manager.gatewayServiceAccountName" -}}
{{- if .Values.gateway.serviceAccount.create }}
{{- default (include "ai-engine-manager.gatewayName" .) .Values.gateway.serviceAccount.name }}
{{- else }}
{{- required "gateway.serviceAccount.name: name the existing ServiceAccount when gateway.serviceAccount.create is false" .Values.gateway.serviceAccount.name }}
{{- end }}
{{- end }}

{{- define "ai-engine-manager.operatorServiceAccountName" -}}
{{- if .Values.operator.serviceAccount.create }}
{{- default (include "ai-engine-manager.operatorName" .) .Values.operator.serviceAccount.name }}
{{- else }}
{{- required "operator.serviceAccount.name: name the existing ServiceAccount when operator.serviceAccount.create is false" .Values.operator.serviceAccount.name }}
{{- end }}
{{- end }}

{{- define "ai-engine-manager.uninstallName" -}}
{{ include "ai-engine-manager.fullname" . }}-uninstall
{{- end }}

{{- define "ai-engine-manager.uninstallServiceAccountName" -}}
{{- if .Values.uninstall.serviceAccount.create }}
{{- default (include "ai-engine-manager.uninstallName" .) .Values.uninstall.serviceAccount.name }}
{{- else }}
{{- required "uninstall.serviceAccount.name: name the existing ServiceAccount when uninstall.serviceAccount.create is false" .Values.uninstall.serviceAccount.name }}
{{- end }}
{{- end }}

{{/* The image reference: repository, then the digest, else the tag (default appVersion). */}}
{{- define "ai-engine-manager.image" -}}
{{- if .Values.image.digest }}
{{- printf "%s@%s" .Values.image.repository .Values.image.digest }}
{{- else }}
{{- printf "%s:%s" .Values.image.repository (default .Chart.AppVersion .Values.image.tag) }}
{{- end }}
{{- end }}

{{/* The base URL users reach the API at. */}}
{{- define "ai-engine-manager.publicUrl" -}}
{{- if .Values.publicUrl }}
{{- .Values.publicUrl }}
{{- else if .Values.ingress.enabled }}
{{- printf "%s://%s" (ternary "https" "http" (ne .Values.ingress.tls.secretName "")) .Values.ingress.host }}
{{- else }}
{{- printf "http://%s.%s.svc:%v" (include "ai-engine-manager.gatewayName" .) .Release.Namespace .Values.gateway.service.restPort }}
{{- end }}
{{- end }}

{{/* The name of the ConfigMap that holds the policy. */}}
{{- define "ai-engine-manager.policyConfigMap" -}}
{{- default (printf "%s-policy" (include "ai-engine-manager.fullname" .)) .Values.policy.existingConfigMap }}
{{- end }}

{{/* The ConfigMap of the operator's GPU queueing configuration. */}}
{{- define "ai-engine-manager.queueingConfigMap" -}}
{{ include "ai-engine-manager.operatorName" . }}-queueing
{{- end }}

{{/* The data of that ConfigMap: the file queueing.yaml, the values under `queueing` but `enabled`. */}}
{{- define "ai-engine-manager.queueingConfig" -}}
queueing.yaml: |
  {{- toYaml (omit .Values.queueing "enabled") | nindent 2 }}
{{- end }}

{{/* The plural names of the fourteen engine.h2o.ai resource kinds, and of the four engine kinds. */}}
{{- define "ai-engine-manager.allKinds" -}}
- daiengines
- h2oengines
- notebookengines
- daiengineprofiles
- h2oengineprofiles
- notebookengineprofiles
- daiengineversions
- h2oengineversions
- notebookengineimages
- sandboxengines
- sandboxengineimages
- sandboxenginetemplates
- processes
- ports
{{- end }}

{{- define "ai-engine-manager.engineKinds" -}}
- daiengines
- h2oengines
- notebookengines
- sandboxengines
{{- end }}

{{/*
A list of plural names with a subresource appended; call with
(dict "kinds" (include "ai-engine-manager.engineKinds" .) "subresource" "status").
*/}}
{{- define "ai-engine-manager.subresources" -}}
{{- $resources := list }}
{{- range (fromYamlArray .kinds) }}
{{- $resources = append $resources (printf "%s/%s" . $.subresource) }}
{{- end }}
{{- toYaml $resources }}
{{- end }}

{{/* Environment variables both processes read. */}}
{{- define "ai-engine-manager.commonEnv" -}}
- name: AIEM_NAMESPACE
  value: {{ .Release.Namespace | quote }}
- name: AIEM_PUBLIC_URL
  value: {{ include "ai-engine-manager.publicUrl" . | quote }}
- name: AIEM_LOG_LEVEL
  value: {{ .Values.logLevel | quote }}
{{- end }}

{{/*
A component's topology spread: the given constraints, or (defaultTopologySpread) a preference to
spread its pods over nodes and zones. Arguments: root, component, values (the component's values).
*/}}
{{- define "ai-engine-manager.topologySpread" -}}
{{- if .values.topologySpreadConstraints }}
topologySpreadConstraints:
  {{- toYaml .values.topologySpreadConstraints | nindent 2 }}
{{- else if .values.defaultTopologySpread }}
topologySpreadConstraints:
  {{- range list "kubernetes.io/hostname" "topology.kubernetes.io/zone" }}
  - maxSkew: 1
    topologyKey: {{ . }}
    whenUnsatisfiable: ScheduleAnyway
    labelSelector:
      matchLabels:
        {{- include "ai-engine-manager.selectorLabels" (dict "root" $.root "component" $.component) | nindent 8 }}
  {{- end }}
{{- end }}
{{- end }}

{{/*
A component's PodDisruptionBudget, named as its Deployment. Arguments: root, component, values.
*/}}
{{- define "ai-engine-manager.podDisruptionBudget" -}}
{{- if .values.podDisruptionBudget.enabled }}
apiVersion: policy/v1
kind: PodDisruptionBudget
metadata:
  name: {{ include "ai-engine-manager.fullname" .root }}-{{ .component }}
  namespace: {{ .root.Release.Namespace }}
  labels:
    {{- include "ai-engine-manager.componentLabels" (dict "root" .root "component" .component) | nindent 4 }}
spec:
  maxUnavailable: {{ .values.podDisruptionBudget.maxUnavailable }}
  selector:
    matchLabels:
      {{- include "ai-engine-manager.selectorLabels" (dict "root" .root "component" .component) | nindent 6 }}
{{- end }}
{{- end }}

{{/*
The ServiceAccount engine pods run as: no permissions, no token mounted.
*/}}
{{- define "ai-engine-manager.engineServiceAccountName" -}}
{{- printf "%s-engine" (include "ai-engine-manager.fullname" .) | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/*
Who may connect to engines' ports (besides the engine's own pods), as JSON NetworkPolicy peers:
the release's gateway pods, whose engine access proxy serves every engine's address; with
allowOtherNamespaces, pods of every other namespace but none of the release namespace; then
engines.networkPolicy.allowFrom. Engines run in the release namespace (the operator's
AIEM_NAMESPACE), as the gateway does, so the gateway's pod selector needs no namespace selector:
a policy's pod selector selects pods of its own namespace.
*/}}
{{- define "ai-engine-manager.engineNetworkPeers" -}}
{{- $gateway := dict "podSelector" (dict "matchLabels" (include "ai-engine-manager.selectorLabels" (dict "root" . "component" "gateway") | fromYaml)) }}
{{- /* The operator asks a notebook or H2O engine at its idle limit whether it is still working. */}}
{{- $operator := dict "podSelector" (dict "matchLabels" (include "ai-engine-manager.selectorLabels" (dict "root" . "component" "operator") | fromYaml)) }}
{{- $peers := list $gateway $operator }}
{{- if .Values.engines.networkPolicy.allowOtherNamespaces }}
{{- $peers = append $peers (include "ai-engine-manager.otherNamespacesPeer" . | fromJson) }}
{{- end }}
{{- concat $peers .Values.engines.networkPolicy.allowFrom | toJson }}
{{- end }}

{{/* Pods of every namespace but the release's, where every user's engines run: a JSON peer. */}}
{{- define "ai-engine-manager.otherNamespacesPeer" -}}
{{- $elsewhere := dict "key" "kubernetes.io/metadata.name" "operator" "NotIn" "values" (list .Release.Namespace) }}
{{- dict "namespaceSelector" (dict "matchExpressions" (list $elsewhere)) | toJson }}
{{- end }}

{{/*
Who else may connect to sandbox pods, whose public ports an ingress controller serves (an Ingress
per port, routed straight to the pod), as JSON NetworkPolicy peers: sandboxes.ports.allowFrom, or
pods of every other namespace (wherever the controller runs) when it is empty.
*/}}
{{- define "ai-engine-manager.sandboxPortsPeers" -}}
{{- if .Values.sandboxes.ports.allowFrom }}
{{- .Values.sandboxes.ports.allowFrom | toJson }}
{{- else }}
{{- list (include "ai-engine-manager.otherNamespacesPeer" . | fromJson) | toJson }}
{{- end }}
{{- end }}

{{/*
The users whose writes the admission webhooks do not review, as a CEL list: the gateway and the
operator (their writes are the API's own), the uninstall hook (deleting engines as the release
goes), Kubernetes' own components, and admission.exemptUsers.
*/}}
{{- define "ai-engine-manager.admissionExemptUsers" -}}
{{- $users := list
  (printf "system:serviceaccount:%s:%s" .Release.Namespace (include "ai-engine-manager.gatewayServiceAccountName" .))
  (printf "system:serviceaccount:%s:%s" .Release.Namespace (include "ai-engine-manager.operatorServiceAccountName" .))
  (printf "system:serviceaccount:%s:%s" .Release.Namespace (include "ai-engine-manager.uninstallServiceAccountName" .))
  "system:kube-controller-manager"
  "system:apiserver" }}
{{- $users = concat $users .Values.admission.exemptUsers }}
{{- $quoted := list }}
{{- range $users }}{{ $quoted = append $quoted (printf "'%s'" (replace "'" "\\'" .)) }}{{ end }}
{{- printf "[%s]" (join ", " $quoted) }}
{{- end }}

{{/* The Secret whose `session-key` signs browser sessions: the one named, or the chart's own. */}}
{{- define "ai-engine-manager.sessionKeySecret" -}}
{{- .Values.oidc.browser.sessionKeySecretName | default (printf "%s-session" (include "ai-engine-manager.fullname" .)) -}}
{{- end }}
