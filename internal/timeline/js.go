package timeline

import _ "embed"

// JS defines SeckillTimeline.draw(container, timeline, title), which draws a Timeline offline.
//
//go:embed timeline.js
var JS string

// CSS is the style of what JS draws.
//
//go:embed timeline.css
var CSS string
