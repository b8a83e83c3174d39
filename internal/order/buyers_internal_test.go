package order

import (
	"context"
	"testing"

	"github.com/seckill/seckill/internal/inventory"
	"github.com/seckill/seckill/internal/testenv"
)

// TestBuyerListsBounded: a product with more buyers than a list holds is answered by probing
// PostgreSQL (every user may be a buyer), never wrongly sold out; and past the most lists a
// process keeps, the least recently used one goes, to be read again, with the same answers.
func TestBuyerListsBounded(t *testing.T) {
	t.Parallel()
	gdb := testenv.Postgres(t)
	ctx := context.Background()
	store := inventory.NewStore(gdb)
	var ids []int64
	for n := range 4 {
		p, err := store.Create(ctx, inventory.NewProduct{Name: "p", Stock: 0})
		if err != nil {
			t.Fatal(err)
		}
		for u := range n + 1 {
			if err := gdb.Exec(`INSERT INTO orders (product_id, user_id) VALUES (?, ?)`, p.ID, 10*(u+1)).Error; err != nil {
				t.Fatal(err)
			}
		}
		ids = append(ids, p.ID)
	}
	b := &buyerLists{marks: fixedMarks{1}, maxListed: 3, maxLists: 2}
	for range 2 { // the second round reads the lists dropped in the first again
		for n, id := range ids {
			for u := int64(5); u <= 50; u += 5 {
				got, err := b.maybeBuyer(ctx, gdb, id, u)
				if err != nil {
					t.Fatal(err)
				}
				buyer := u%10 == 0 && u/10 <= int64(n+1)
				switch {
				case buyer && !got:
					t.Errorf("product %d (%d buyers): user %d, a buyer, said not one", id, n+1, u)
				case !buyer && got && n+1 <= 3:
					t.Errorf("product %d (%d buyers, listed): user %d said a buyer", id, n+1, u)
				}
			}
			if kept := b.n; kept > 2 {
				t.Fatalf("%d lists kept, want at most 2", kept)
			}
		}
	}
	if v, _ := b.m.Load(ids[3]); v == nil || v.(*buyerList).all || v.(*buyerList).users != nil {
		t.Errorf("the product with 4 buyers, over the limit of 3: list %+v, want one kept and not listed", v)
	}
}

// fixedMarks says every product is sold out under mark inc, as inventory.SoldOut's
// Incarnation would; a test sets inc to stand for a mark lifted and made anew.
type fixedMarks struct{ inc uint64 }

func (f fixedMarks) Incarnation(int64) (uint64, bool) { return f.inc, f.inc != 0 }

// TestBuyerListOfAnotherMark: a list read under one mark never answers under the next, even
// when it is stored after the lift (a read racing the lift and the return): a buyer whose
// order ended meanwhile is not said a buyer, and a buyer of the returned unit is. Under no
// mark at all (lifted, not marked again), every buyer may be one (PostgreSQL is asked).
func TestBuyerListOfAnotherMark(t *testing.T) {
	t.Parallel()
	gdb := testenv.Postgres(t)
	ctx := context.Background()
	p, err := inventory.NewStore(gdb).Create(ctx, inventory.NewProduct{Name: "p", Stock: 0})
	if err != nil {
		t.Fatal(err)
	}
	exec := func(q string, args ...any) {
		t.Helper()
		if err := gdb.Exec(q, args...).Error; err != nil {
			t.Fatal(err)
		}
	}
	exec(`INSERT INTO orders (product_id, user_id) VALUES (?, 10)`, p.ID)
	marks := &fixedMarks{1}
	b := &buyerLists{marks: marks}
	is := func(user int64, want bool) {
		t.Helper()
		got, err := b.maybeBuyer(ctx, gdb, p.ID, user)
		if err != nil {
			t.Fatal(err)
		}
		if got != want {
			t.Errorf("mark %d: user %d a buyer = %v, want %v", marks.inc, user, got, want)
		}
	}
	is(10, true)
	is(20, false)
	// Lifted: user 10's order ends and its unit goes to user 20. The lift's drop came before
	// a late read, which stored the list as it was under mark 1.
	b.drop(p.ID)
	if err := b.load(ctx, gdb, p.ID, 1); err != nil {
		t.Fatal(err)
	}
	exec(`DELETE FROM orders WHERE product_id = ? AND user_id = 10`, p.ID)
	exec(`INSERT INTO orders (product_id, user_id) VALUES (?, 20)`, p.ID)
	b.marks = fixedMarks{}
	is(20, true) // no mark: maybe
	marks.inc = 2
	b.marks = marks
	is(20, true)  // sold out again: 20 holds the returned unit
	is(10, false) // 10's order ended
	is(30, false)
}
