package manifest_test

import (
	"fmt"
	"os"
	"sort"
	"strings"

	"github.com/rehost/rehost/pkg/manifest"
	"github.com/rehost/rehost/pkg/rewrite"
)

// Image references inside strings are always found and reported; with
// RewriteEmbedded they are rewritten in place, the rest of the string kept.
func ExampleRewriter_Embedded() {
	in := `apiVersion: apps/v1
kind: Deployment
metadata: {name: cert-manager}
spec:
  template:
    spec:
      containers:
      - name: controller
        image: quay.io/jetstack/cert-manager-controller:v1.16.1
        args:
        - --acme-http01-solver-image=quay.io/jetstack/cert-manager-acmesolver:v1.16.1
`
	rw, err := manifest.New(rewrite.Config{RewriteEmbedded: true})
	if err != nil {
		panic(err)
	}
	if err := rw.Rewrite(os.Stdout, strings.NewReader(in), "cert-manager.yaml"); err != nil {
		panic(err)
	}
	for _, img := range rw.Embedded() {
		l := img.Occurrences[0]
		fmt.Printf("%s:%d:%d %s %s -> %s\n", l.File, l.Line, l.Column, l.Field, img.Source, img.Target)
	}
	// Output:
	// apiVersion: apps/v1
	// kind: Deployment
	// metadata: {name: cert-manager}
	// spec:
	//   template:
	//     spec:
	//       containers:
	//       - name: controller
	//         image: sea.hub:5000/jetstack/cert-manager-controller:v1.16.1
	//         args:
	//         - --acme-http01-solver-image=sea.hub:5000/jetstack/cert-manager-acmesolver:v1.16.1
	// cert-manager.yaml:11:38 spec.template.spec.containers[0].args[0] quay.io/jetstack/cert-manager-acmesolver:v1.16.1 -> sea.hub:5000/jetstack/cert-manager-acmesolver:v1.16.1
}

// The built-in table of known operator kinds: Prometheus, Tekton, Argo
// Workflows, Flux, KubeVirt, OLM, without any configured imageFields.
func ExampleBuiltinImageFields() {
	kinds := map[string]bool{}
	for _, f := range manifest.BuiltinImageFields() {
		kinds[f.Group+"/"+f.Kind] = true
	}
	for _, c := range manifest.BuiltinCompositeFields() {
		for _, k := range c.Kinds {
			kinds[c.Group+"/"+k] = true
		}
	}
	var list []string
	for k := range kinds {
		list = append(list, k)
	}
	sort.Strings(list)
	fmt.Println(strings.Join(list, "\n"))
	// Output:
	// argoproj.io/ClusterWorkflowTemplate
	// argoproj.io/CronWorkflow
	// argoproj.io/Workflow
	// argoproj.io/WorkflowTemplate
	// cdi.kubevirt.io/DataVolume
	// kiali.io/Kiali
	// kiali.io/OSSMConsole
	// kubevirt.io/VirtualMachine
	// kubevirt.io/VirtualMachineInstance
	// kubevirt.io/VirtualMachineInstanceReplicaSet
	// monitoring.coreos.com/Alertmanager
	// monitoring.coreos.com/Prometheus
	// monitoring.coreos.com/PrometheusAgent
	// monitoring.coreos.com/ThanosRuler
	// operator.victoriametrics.com/VLSingle
	// operator.victoriametrics.com/VLogs
	// operator.victoriametrics.com/VMAgent
	// operator.victoriametrics.com/VMAlert
	// operator.victoriametrics.com/VMAlertmanager
	// operator.victoriametrics.com/VMAnomaly
	// operator.victoriametrics.com/VMAuth
	// operator.victoriametrics.com/VMCluster
	// operator.victoriametrics.com/VMSingle
	// operators.coreos.com/ClusterServiceVersion
	// pingcap.com/DMCluster
	// pingcap.com/TidbCluster
	// pingcap.com/TidbInitializer
	// pingcap.com/TidbNGMonitoring
	// pool.kubevirt.io/VirtualMachinePool
	// source.toolkit.fluxcd.io/OCIRepository
	// tekton.dev/ClusterTask
	// tekton.dev/Pipeline
	// tekton.dev/PipelineRun
	// tekton.dev/StepAction
	// tekton.dev/Task
	// tekton.dev/TaskRun
}
