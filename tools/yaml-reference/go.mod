// Throwaway tool module: builds yaml-reference, sigs.k8s.io/yaml's reading of YAML, for the table
// test of Stencil's YAML reader (docs/adr/0036). Not shipped.
module stencil.local/tools/yaml-reference

go 1.26.0

require sigs.k8s.io/yaml v1.6.0

require go.yaml.in/yaml/v2 v2.4.2 // indirect
