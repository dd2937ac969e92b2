// olm-validate checks an OLM bundle directory (manifests/ + metadata/) with operator-framework/api's own
// validators, the library behind `operator-sdk bundle validate`. It prints one JSON report on stdout and exits
// 1 when any validator reports an error (or, with -strict, a warning), 2 when the bundle cannot be loaded.
//
//	olm-validate [-strict] [-k8s-version 1.30] BUNDLE_DIR
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"

	"github.com/operator-framework/api/pkg/manifests"
	"github.com/operator-framework/api/pkg/validation"
	"github.com/operator-framework/api/pkg/validation/errors"
)

// The bundle validators OLM itself runs, plus the optional ones operator-sdk offers for OperatorHub: its
// metadata rules, the standard capability and category values, the objects besides the CSV (PDBs, ...),
// APIs removed in the target Kubernetes version, and the good practices (resource requests, channel names,
// RBAC on the owned CRDs, descriptions).
var validators = validation.DefaultBundleValidators.WithValidators(
	validation.OperatorHubV2Validator,
	validation.StandardCapabilitiesValidator,
	validation.StandardCategoriesValidator,
	validation.ObjectValidator,
	validation.AlphaDeprecatedAPIsValidator,
	validation.GoodPracticesValidator,
)

type finding struct {
	Level  string `json:"level"`
	Type   string `json:"type"`
	Field  string `json:"field,omitempty"`
	Detail string `json:"detail"`
	Error  string `json:"error"`
}

type result struct {
	Name     string    `json:"name"`
	Errors   []finding `json:"errors"`
	Warnings []finding `json:"warnings"`
}

type report struct {
	Bundle     string   `json:"bundle"`
	Package    string   `json:"package"`
	Channels   []string `json:"channels"`
	CSV        string   `json:"csv"`
	CRDs       []string `json:"crds"`
	Objects    []string `json:"objects"`
	Validators int      `json:"validators"`
	Results    []result `json:"results"`
	Errors     int      `json:"errors"`
	Warnings   int      `json:"warnings"`
}

func findings(list []errors.Error) []finding {
	out := make([]finding, 0, len(list))
	for _, e := range list {
		out = append(out, finding{Level: string(e.Level), Type: string(e.Type), Field: e.Field, Detail: e.Detail, Error: e.Error()})
	}
	return out
}

func main() {
	strict := flag.Bool("strict", false, "exit 1 on warnings as well as errors")
	k8sVersion := flag.String("k8s-version", "", "Kubernetes version for the removed-APIs check (default: the CSV's minKubeVersion)")
	flag.Parse()
	if flag.NArg() != 1 {
		fmt.Fprintln(os.Stderr, "usage: olm-validate [-strict] [-k8s-version X.Y] BUNDLE_DIR")
		os.Exit(2)
	}
	dir := flag.Arg(0)

	bundle, err := manifests.GetBundleFromDir(dir)
	if err != nil {
		fmt.Fprintf(os.Stderr, "olm-validate: cannot load the bundle in %s: %v\n", dir, err)
		os.Exit(2)
	}

	objects := bundle.ObjectsToValidate()
	if *k8sVersion != "" {
		objects = append(objects, map[string]string{"k8s-version": *k8sVersion})
	}

	out := report{Bundle: dir, Package: bundle.Package, Channels: bundle.Channels, CSV: bundle.CSV.GetName(), Validators: len(validators)}
	for _, crd := range bundle.V1CRDs {
		out.CRDs = append(out.CRDs, crd.GetName())
	}
	for _, object := range bundle.Objects {
		out.Objects = append(out.Objects, object.GetKind()+"/"+object.GetName())
	}
	for _, r := range validators.Validate(objects...) {
		if len(r.Errors) == 0 && len(r.Warnings) == 0 {
			continue
		}
		out.Results = append(out.Results, result{Name: r.Name, Errors: findings(r.Errors), Warnings: findings(r.Warnings)})
		out.Errors += len(r.Errors)
		out.Warnings += len(r.Warnings)
	}

	encoder := json.NewEncoder(os.Stdout)
	encoder.SetIndent("", "  ")
	if err := encoder.Encode(out); err != nil {
		fmt.Fprintf(os.Stderr, "olm-validate: %v\n", err)
		os.Exit(2)
	}
	if out.Errors > 0 || (*strict && out.Warnings > 0) {
		os.Exit(1)
	}
}
