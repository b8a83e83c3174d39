package client_test

import (
	"context"
	"errors"
	"fmt"
	"log"

	"github.com/seckill/seckill/internal/api"
	"github.com/seckill/seckill/internal/api/client"
)

// A sale through the typed client: create a product (admin), buy it, and branch on the
// problem codes of the answers that are not an order.
func Example() {
	ctx := context.Background()
	c := client.New("http://127.0.0.1:8080", &client.Options{AdminToken: "secret"})
	p, err := c.CreateProduct(ctx, api.NewProduct{Name: "widget", Stock: new(100), Strategy: "redis"})
	if err != nil {
		log.Fatal(err)
	}
	o, err := c.Purchase(ctx, p.ID, 42)
	var prob *api.Problem
	switch {
	case err == nil:
		fmt.Println("bought: order", o.ID)
	case errors.As(err, &prob) && prob.Code == api.CodeSoldOut:
		fmt.Println("sold out")
	case errors.As(err, &prob) && prob.Code == api.CodeAlreadyPurchased:
		fmt.Println("bought before: order", prob.OrderID)
	case errors.As(err, &prob) && prob.RetryAfter != "":
		fmt.Println("retry after", prob.RetryAfter, "s:", prob.Code)
	default: // no answer: retrying the purchase is safe, a user buys once
		log.Fatal(err)
	}
}
