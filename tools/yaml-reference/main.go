// Throwaway reference tool, not shipped: reads YAML documents as kubectl and the API server read
// them (sigs.k8s.io/yaml over go-yaml v2), so a test can compare Stencil's reader with theirs.
// Input on stdin: a JSON array of YAML texts. Output: a JSON array, for each text either
// {"json": <the JSON that YAMLToJSON makes of it>} or {"error": <its message>}, and a strict
// verdict ({"strictError": ...}) from YAMLToJSONStrict, which refuses duplicate keys.
package main

import (
	"encoding/json"
	"os"

	"sigs.k8s.io/yaml"
)

type result struct {
	JSON        json.RawMessage `json:"json,omitempty"`
	Error       string          `json:"error,omitempty"`
	StrictError string          `json:"strictError,omitempty"`
}

func main() {
	var texts []string
	if err := json.NewDecoder(os.Stdin).Decode(&texts); err != nil {
		os.Stderr.WriteString("yaml-reference: stdin must be a JSON array of strings: " + err.Error() + "\n")
		os.Exit(2)
	}
	results := make([]result, len(texts))
	for i, text := range texts {
		out, err := yaml.YAMLToJSON([]byte(text))
		if err != nil {
			results[i].Error = err.Error()
		} else {
			results[i].JSON = out
		}
		if _, err := yaml.YAMLToJSONStrict([]byte(text)); err != nil {
			results[i].StrictError = err.Error()
		}
	}
	if err := json.NewEncoder(os.Stdout).Encode(results); err != nil {
		os.Exit(1)
	}
}
