package procs

import (
	"errors"
	"fmt"
)

// isolateTable is the nftables table of a namespace cut off whole (Isolate).
const isolateTable = "seckill_isolate"

// Isolate silently drops every packet through the namespace's veth until Rejoin.
func (n *Netns) Isolate() error {
	n.mu.Lock()
	defer n.mu.Unlock()
	families := []string{"netdev", "inet"}
	if n.family != "" {
		families = []string{n.family}
	}
	var errs []error
	for _, family := range families {
		err := n.nftables(isolateRules(family))
		if err == nil {
			n.family = family
			return nil
		}
		errs = append(errs, err)
	}
	return fmt.Errorf("isolate %s: %w", n.Name, errors.Join(errs...))
}

// isolateRules is the nftables script that replaces the isolate table with one of the family
// (netdev: at the veth end; inet: at the namespace's IP stack, on older kernels) that drops
// every IP packet through the veth, both ways.
func isolateRules(family string) string {
	hooks := [2]string{"output", "input"}
	match := [2]string{`oifname "` + insideDev + `"`, `iifname "` + insideDev + `"`}
	if family == "netdev" {
		hooks = [2]string{`egress device "` + insideDev + `"`, `ingress device "` + insideDev + `"`}
		match = [2]string{"meta protocol { ip, ip6 }", "meta protocol { ip, ip6 }"}
	}
	return fmt.Sprintf("table %[1]s %[2]s\ndelete table %[1]s %[2]s\ntable %[1]s %[2]s {\n"+
		"\tchain out {\n\t\ttype filter hook %[3]s priority 0; policy accept;\n\t\t%[4]s drop\n\t}\n"+
		"\tchain in {\n\t\ttype filter hook %[5]s priority 0; policy accept;\n\t\t%[6]s drop\n\t}\n}\n",
		family, isolateTable, hooks[0], match[0], hooks[1], match[1])
}

// Rejoin lifts Isolate, if any.
func (n *Netns) Rejoin() error {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.family == "" {
		return nil
	}
	// Declaring the table first makes the deletion succeed whether or not it exists.
	script := fmt.Sprintf("table %[1]s %[2]s\ndelete table %[1]s %[2]s\n", n.family, isolateTable)
	if err := n.nftables(script); err != nil {
		return fmt.Errorf("rejoin %s: %w", n.Name, err)
	}
	return nil
}
