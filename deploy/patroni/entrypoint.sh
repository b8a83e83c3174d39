#!/bin/sh
# seckill-patroni: a compose Patroni node. Patroni reads its passwords from the environment
# only; compose hands them over as files (/run/secrets), read here, never in compose.yaml.
set -eu
PATRONI_SUPERUSER_PASSWORD=$(cat /run/secrets/patroni_superuser_password)
PATRONI_REPLICATION_PASSWORD=$(cat /run/secrets/patroni_replication_password)
export PATRONI_SUPERUSER_PASSWORD PATRONI_REPLICATION_PASSWORD
export PATRONI_POSTGRESQL_PGPASS=/tmp/pgpass
exec patroni /etc/patroni
