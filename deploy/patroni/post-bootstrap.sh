#!/bin/sh
# seckill-post-bootstrap CONNSTRING: run once by Patroni on the node that initialises the
# cluster, as the postgres role: the service's role (its password the postgres_password
# secret, as compose.yaml's single PostgreSQL has it) and database.
set -eu
psql -v ON_ERROR_STOP=1 -v pw="$(cat /run/secrets/postgres_password)" "$1" <<'SQL'
CREATE ROLE seckill LOGIN PASSWORD :'pw';
CREATE DATABASE seckill OWNER seckill;
SQL
