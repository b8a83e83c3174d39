package timeline

import _ "embed"

// JS is the script that draws a Timeline (its JSON) in a page: it defines
// SeckillTimeline.draw(container, timeline, title), which fills container with a header, zoom
// buttons and an SVG of the lanes. It loads nothing from the network. The lab's report
// inlines it; the live page serves it as /assets/timeline.js.
//
//go:embed timeline.js
var JS string

// CSS is the style of what JS draws. The lab's report inlines it; the live page, whose
// Content-Security-Policy refuses inline style, serves it as /assets/timeline.css.
//
//go:embed timeline.css
var CSS string
