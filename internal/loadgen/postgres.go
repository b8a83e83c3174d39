package loadgen

import (
	"database/sql"
	"fmt"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib" // database/sql's "pgx" driver
)

// openPostgres opens a pool of at most maxOpen connections to the PostgreSQL at url, for the
// direct audit and the lab's: database/sql through pgx, as the service's own pool, with none
// of the service's packages. It does not wait for the server.
func openPostgres(url string, maxOpen int) (*sql.DB, error) {
	db, err := sql.Open("pgx", url)
	if err != nil {
		return nil, fmt.Errorf("open database: %w", err)
	}
	db.SetMaxOpenConns(maxOpen)
	db.SetMaxIdleConns(maxOpen)
	db.SetConnMaxLifetime(30 * time.Minute)
	return db, nil
}
