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
	b := &buyerLists{maxListed: 3, maxLists: 2}
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
