package timeline

import _ "embed"

// JS is the script that draws a Timeline (its JSON) in a page: it defines
// SeckillTimeline.draw(container, timeline, title), which fills container with a header, zoom
// buttons and an SVG of the lanes, and brings its own style. It loads nothing from the
// network. The lab's report inlines it; the live page serves it as /assets/timeline.js.
//
//go:embed timeline.js
var JS string
