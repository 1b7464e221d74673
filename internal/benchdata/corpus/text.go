package corpus

import (
	"strings"
)

// plainSentences are description sentences for schema fields that have
// nothing to do with container images. None of them contains "image".
var plainSentences = []string{
	"%s configures how the controller reconciles this object.",
	"When omitted, the operator applies a default that may change between releases.",
	"The value must be a valid DNS subdomain as defined in RFC 1123.",
	"Deprecated: use the field with the same name under spec.template instead.",
	"This field is immutable once the object has been created.",
	"More info: https://kubernetes.io/docs/concepts/overview/working-with-objects/labels",
	"Only one of the fields below may be set at a time.",
	"A duration string such as 30s, 5m or 1h30m; zero disables the behaviour.",
	"Selects the key of a secret that holds the credential; the secret must live in the namespace of the object.",
	"If the referenced object does not exist the reconciliation fails and an event is recorded.",
	"Use the `relabelings` list to rewrite target labels before scraping.",
	"Possible values are Always, OnFailure and Never.",
	"This is a beta field and requires the corresponding feature gate to be enabled.",
	"Entries are merged by key; later entries replace earlier ones.",
	"The port may be given by number or by name (IANA_SVC_NAME).",
	"%s defaults to the namespace of the owning resource when left empty.",
	"Status reflects the most recently observed state and is populated by the system; it is read-only.",
	"Values are expressed as Kubernetes quantities, for example 500m or 2Gi.",
	"TLS settings applied when the scheme is https; the server certificate is verified unless insecureSkipVerify is true.",
	"Label selector for the set of objects this rule applies to; an empty selector matches everything.",
	"Conditions lists the latest available observations of the object's state.",
	"\"Ready\" means the object was reconciled successfully and all its children are available.",
	"Retention time for stored samples, in a format matching the regular expression [0-9]+(ms|s|m|h|d|w|y).",
	"Matches labels with operators such as In, NotIn, Exists and DoesNotExist.",
	"The webhook receives the full object as JSON and must answer within the configured timeout.",
	"A list of hosts for which the certificate is valid; wildcards like *.example.com are allowed.",
	"It is the caller's responsibility to rotate the key; the controller only reads it.",
	"Setting %s to false stops the controller from managing the resource, without deleting it.",
	"Paths must be absolute and may not contain the sequence '..'.",
	"The number of desired replicas; the controller scales up or down to reach it.",
	"Note that this field cannot be set when spec.os.name is windows.",
	"The maximum number of samples a single query can load into memory, across all series.",
	"%s is a map of string keys and values that can be used to organize and categorize objects.",
	"Specifies the action to take when the limit is exceeded: drop the sample, or fail the whole scrape.",
	"An empty list means the default set of cipher suites of the Go standard library is used.",
	"The controller watches only the namespaces listed here; leave it empty to watch all namespaces.",
}

// imageSentences are description sentences that talk about container
// images, as the embedded container schemas of real operators do.
var imageSentences = []string{
	"Image is the container image to run; it overrides the default image chosen by the operator.",
	"If the image has a digest, the tag is ignored and the image is pulled by digest.",
	"Image pull policy: one of Always, Never, IfNotPresent. Defaults to Always if the :latest tag is given, IfNotPresent otherwise.",
	"ImagePullSecrets is a list of references to secrets in the same namespace used to pull any of the images of this object.",
	"Container image name. More info: https://kubernetes.io/docs/concepts/containers/images",
	"BaseImage is deprecated: use image instead. The image must contain the binaries the operator expects.",
	"The sidecar image is injected into every pod; set it to an image in a private registry in air-gapped clusters.",
	"When set, the operator pins the image version to the value reported by the release, for example quay.io/org/app:v1.2.3.",
	"Lists of container images that are pre-pulled on every node before the rollout begins.",
	"Tag of the image; ignored when sha or image is given.",
}

// Property names for generated schemas; none contains "image".
var fieldWords = []string{
	"accessModes", "additionalArgs", "address", "affinity", "alerting", "allowPrivilegeEscalation",
	"annotations", "apiKey", "authorization", "automountToken", "backoffLimit", "basicAuth", "bearerTokenFile",
	"bucket", "ca", "capabilities", "cert", "channel", "cipherSuites", "claims", "clientId", "clientSecret",
	"cluster", "concurrency", "conditions", "config", "configMap", "containerPort", "credentials",
	"cronSchedule", "dataSource", "database", "defaultMode", "dnsConfig", "dnsPolicy", "duration", "effect",
	"enableFeatures", "enabled", "endpoint", "endpointParams", "endpoints", "escalationPolicy", "evaluationInterval",
	"exemplars", "expression", "externalLabels", "externalUrl", "failurePolicy", "fallback", "filter", "format",
	"group", "headers", "healthCheck", "host", "hostAliases", "hostNetwork", "hostPath", "hostnames", "http2",
	"httpConfig", "insecureSkipVerify", "interval", "ip", "issuerRef", "items", "jobLabel", "keySecret",
	"labelSelector", "labels", "limits", "listenLocal", "logFormat", "logLevel", "lookbackDelta", "matchExpressions",
	"matchLabels", "maxConcurrency", "maxConnections", "maxSamples", "maxShards", "maxSkew", "medium",
	"message", "metricRelabelings", "minBackoff", "minReadySeconds", "minVersion", "mode", "name",
	"namespace", "namespaceSelector", "nodeSelector", "oauth2", "objectStorageConfig", "observedGeneration",
	"operator", "optional", "overrides", "pageTitle", "params", "path", "paused", "persistentVolumeClaim",
	"podMetadata", "policy", "port", "portName", "priorityClassName", "privateKey", "protocol", "proxyUrl",
	"query", "queueConfig", "reason", "receiver", "relabelings", "remoteRead", "remoteWrite", "renewBefore",
	"replicas", "requests", "resources", "retention", "retentionSize", "revisionHistoryLimit", "route",
	"routePrefix", "ruleSelector", "rules", "runAsGroup", "runAsUser", "sampleLimit", "scheme", "scopes",
	"scrapeTimeout", "secret", "secretName", "selector", "serverName", "serviceAccountName", "shards",
	"sizeLimit", "source", "status", "storage", "storageClassName", "strategy", "subjects", "suspend",
	"targetLabels", "targetPort", "targets", "template", "tenant", "timeout", "tlsConfig", "tokenUrl",
	"tolerations", "topologyKey", "topologySpreadConstraints", "type", "url", "usages", "value",
	"version", "volumeMode", "volumes", "walCompression", "web", "webhook", "weight", "whenUnsatisfiable",
}

// patterns are validation patterns of the kind controller-gen writes, with
// backslashes, as plain scalars.
var patterns = []string{
	`^(\+|-)?(([0-9]+(\.[0-9]*)?)|(\.[0-9]+))(([KMGTPE]i)|[numkMGTPE]|([eE](\+|-)?(([0-9]+(\.[0-9]*)?)|(\.[0-9]+))))?$`,
	`^(0|(([0-9]+)y)?(([0-9]+)w)?(([0-9]+)d)?(([0-9]+)h)?(([0-9]+)m)?(([0-9]+)s)?(([0-9]+)ms)?)$`,
	`^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$`,
	`(^0|([0-9]*[.])?[0-9]+((K|M|G|T|E|P)i?)?B)$`,
	`^(http|https)://.+$`,
	`^[A-Za-z_][A-Za-z0-9_]*$`,
	`^([a-zA-Z0-9_\-.]+)$`,
	`^(\d+(e\d+)?|\d+(\.\d+)?(e\d+)?[EinumkKMGTP]*)$`,
}

// quotedPatterns are patterns written as double-quoted scalars, with
// escaped backslashes.
var quotedPatterns = []string{
	`"^https?://[^\\s]+$"`,
	`"^[0-9]+(\\.[0-9]+)?(ms|s|m|h)$"`,
	`"^\\$\\{[A-Z_]+\\}$"`,
}

// enums are enum lists, as YAML sequence items, including the YAML 1.1
// values real CRDs carry.
var enums = [][]string{
	{"=", "'!='", "=~", "'!~'"},
	{"Always", "OnFailure", "Never"},
	{"HTTP", "HTTPS"},
	{"\"On\"", "\"Off\"", "Auto"},
	{"debug", "info", "warn", "error", "\"\""},
	{"Exists", "Equal"},
	{"NoSchedule", "PreferNoSchedule", "NoExecute"},
	{"\"y\"", "\"n\"", "\"true\"", "\"false\""},
	{"replace", "keep", "drop", "hashmod", "labelmap", "labeldrop", "labelkeep", "lowercase", "uppercase", "Replace", "Keep", "Drop", "HashMod", "LabelMap", "LabelDrop", "LabelKeep", "Lowercase", "Uppercase"},
}

// crdKinds are kinds for generated CustomResourceDefinitions.
var crdKinds = []string{
	"Alertmanager", "AlertmanagerConfig", "PodMonitor", "Probe", "Prometheus", "PrometheusAgent",
	"PrometheusRule", "ScrapeConfig", "ServiceMonitor", "ThanosRuler", "Certificate", "CertificateRequest",
	"ClusterIssuer", "Issuer", "Order", "Challenge", "Application", "ApplicationSet", "AppProject",
	"Rollout", "AnalysisTemplate", "Experiment", "VirtualService", "DestinationRule", "Gateway",
	"EnvoyFilter", "Sidecar", "Tenant", "Backup", "Restore", "Schedule", "VolumeSnapshotLocation",
	"ClusterPolicy", "Policy", "PolicyReport", "Kafka", "KafkaTopic", "KafkaUser", "Cluster", "Pooler",
	"ScaledObject", "TriggerAuthentication", "Workflow", "WorkflowTemplate", "CronWorkflow", "EventSource",
	"Sensor", "Elasticsearch", "Kibana", "Agent", "Logstash", "Grafana", "GrafanaDashboard",
}

// chartNames name the charts whose "helm template" output the corpus imitates.
var chartNames = []string{
	"kube-prometheus-stack", "cert-manager", "argo-cd", "argo-rollouts", "loki", "tempo", "istio-base",
	"velero", "kyverno", "strimzi", "cloudnative-pg", "keda", "argo-workflows", "eck-operator",
	"grafana-operator", "ingress-nginx", "external-dns", "longhorn", "kiali-operator", "minio",
}

var components = []string{
	"operator", "controller", "webhook", "server", "api", "worker", "scheduler", "agent", "exporter",
	"gateway", "frontend", "backend", "cainjector", "repo-server", "redis", "querier", "ingester",
	"compactor", "distributor", "admission", "node", "manager", "sync", "notifications",
}

func capitalize(s string) string { return strings.ToUpper(s[:1]) + s[1:] }
