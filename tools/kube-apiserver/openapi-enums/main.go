// Prints the enums of the OpenAPI definitions compiled into kube-apiserver, for `npm run generate`
// (tools/k8s-schemas.ts). The OpenAPI documents checked into k8s.io/kubernetes are generated with
// OpenAPIEnums=false (hack/update-openapi-spec.sh), while a default API server serves the enums:
// this tool recovers them from the same generated Go definitions the server builds its spec from.
//
// Output: {"<definition>": [{"at": ["properties", "imagePullPolicy"], "enum": [...]}, ...]}, the
// path going through properties, items and additionalProperties; sorted, so it is reproducible.
package main

import (
	"encoding/json"
	"os"
	"sort"
	"strings"

	"k8s.io/kube-openapi/pkg/validation/spec"
	"k8s.io/kubernetes/pkg/generated/openapi"
)

type enumAt struct {
	At   []string      `json:"at"`
	Enum []interface{} `json:"enum"`
}

func walk(schema *spec.Schema, at []string, out *[]enumAt) {
	if schema == nil {
		return
	}
	if len(schema.Enum) > 0 {
		*out = append(*out, enumAt{At: append([]string{}, at...), Enum: schema.Enum})
	}
	for name, property := range schema.Properties {
		property := property
		walk(&property, append(append([]string{}, at...), "properties", name), out)
	}
	if schema.Items != nil {
		walk(schema.Items.Schema, append(append([]string{}, at...), "items"), out)
	}
	if schema.AdditionalProperties != nil {
		walk(schema.AdditionalProperties.Schema, append(append([]string{}, at...), "additionalProperties"), out)
	}
}

func main() {
	definitions := openapi.GetOpenAPIDefinitions(func(path string) spec.Ref {
		return spec.MustCreateRef("#/components/schemas/" + path)
	})
	enums := map[string][]enumAt{}
	for name, definition := range definitions {
		schema := definition.Schema
		var found []enumAt
		walk(&schema, nil, &found)
		if len(found) == 0 {
			continue
		}
		sort.Slice(found, func(i, j int) bool {
			return strings.Join(found[i].At, "/") < strings.Join(found[j].At, "/")
		})
		enums[name] = found
	}
	encoder := json.NewEncoder(os.Stdout)
	if err := encoder.Encode(enums); err != nil {
		panic(err)
	}
}
