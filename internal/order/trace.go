package order

import (
	"context"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/trace"

	"github.com/seckill/seckill/internal/inventory"
	"github.com/seckill/seckill/internal/tracing"
)

// The spans of one batch of the dlock strategy, when tracing is on (Deps.Tracer):
//
//	order.batch   the leader's whole batch, a child of the leader's span, linked to the
//	              span of each buyer it served (buyers join from their own requests)
//	  lock.wait   obtaining the product's lock (with the lock's Redis calls)
//	  lock.hold   from holding the lock to its release: the transaction's PostgreSQL calls
//	              descend from it
//
// A bundle has no batch: its lock.wait and lock.hold are children of its buyer's span.
// With tracing off every method is a no-op that allocates nothing.
type batchSpans struct {
	tracer trace.Tracer
	batch  trace.Span // nil for a bundle
	parent trace.Span // of the hold: the batch, or the bundle buyer's span
	wait   trace.Span
	hold   trace.Span // nil until the lock is held
	links  int
}

// noSpans are the spans of every batch when tracing is off: nothing, and never changed.
var noSpans = &batchSpans{}

// startBatchSpans starts the batch's span and its lock wait's on ctx, and returns ctx with
// the batch's span and waitCtx, the context to obtain the lock on, with the wait's.
func (l *lockedBuyer) startBatchSpans(ctx context.Context, p inventory.Product) (bctx, waitCtx context.Context, s *batchSpans) {
	if l.tracer == nil {
		return ctx, ctx, noSpans
	}
	s = &batchSpans{tracer: l.tracer}
	id := attribute.Int64("seckill.product_id", p.ID)
	ctx, s.batch = l.tracer.Start(ctx, "order.batch", trace.WithAttributes(id, attribute.Bool("seckill.fair", p.Fair)))
	s.parent = s.batch
	waitCtx, s.wait = l.tracer.Start(ctx, "lock.wait", trace.WithAttributes(id))
	return ctx, waitCtx, s
}

// startBundleSpans starts the lock wait of a bundle of products ids, a child of ctx's span,
// and returns the context to obtain the locks on.
func (l *lockedBuyer) startBundleSpans(ctx context.Context, ids []int64) (waitCtx context.Context, s *batchSpans) {
	if l.tracer == nil {
		return ctx, noSpans
	}
	s = &batchSpans{tracer: l.tracer, parent: trace.SpanFromContext(ctx)}
	waitCtx, s.wait = l.tracer.Start(ctx, "lock.wait", trace.WithAttributes(attribute.Int64Slice("seckill.product_ids", ids)))
	return waitCtx, s
}

// held ends the wait and starts the hold, a child of the batch's span (or the bundle
// buyer's), on lctx (the held lock's context), which it returns with the hold's span. fence
// is the lock's fence, 0 for a bundle's several locks.
func (s *batchSpans) held(lctx context.Context, fence int64) context.Context {
	if s.tracer == nil {
		return lctx
	}
	s.wait.End()
	lctx, s.hold = s.tracer.Start(trace.ContextWithSpan(lctx, s.parent), "lock.hold")
	if fence != 0 {
		s.hold.SetAttributes(attribute.Int64("seckill.fence", fence))
	}
	return lctx
}

// link links the batch's span to the spans of its buyers.
func (s *batchSpans) link(reqs []*request) {
	if s.tracer == nil || s.batch == nil || !s.batch.IsRecording() {
		return
	}
	for _, r := range reqs {
		if r.span.IsValid() {
			s.batch.AddLink(trace.Link{SpanContext: r.span})
			s.links++
		}
	}
}

// end ends the spans still open once the batch is answered: the hold (or the wait, if the
// lock was never had) and the batch, each marked with err, what ended the batch.
func (s *batchSpans) end(reqs []*request, err error) {
	if s.tracer == nil {
		return
	}
	if s.hold != nil {
		tracing.End(s.hold, err)
	} else {
		tracing.End(s.wait, err)
	}
	if s.batch == nil {
		return
	}
	if s.links == 0 {
		s.link(reqs) // the lock was never had: its buyers were answered without it
	}
	if s.batch.IsRecording() {
		s.batch.SetAttributes(attribute.Int("seckill.batch_size", len(reqs)))
	}
	tracing.End(s.batch, err)
}
