// Package deploycheck holds the tests of the deployment files: compose.yaml, loaded with
// compose-go as Docker Compose reads it, and deploy/k8s, rendered with kustomize's krusty and
// decoded strictly into the Kubernetes API types. Each test asserts what must hold of a
// deployment of seckill (images pinned, health checks waited on, no secret with a default, a
// grace period above the API's drain, several replicas behind the load balancer), and keeps a
// negative control per check: a mutated copy of the file that the check must reject.
//
// The package has no code of its own outside its tests, and no binary imports it. It lives
// under internal/ rather than in deploy/, which holds the configuration files only.
package deploycheck
