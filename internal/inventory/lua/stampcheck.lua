-- stampcheck: the start of a verification of the gate (Gate.Verification): the data set
-- Redis serves, the gate's stamp ('' if none) and whether the gate exists.
-- KEYS[1] stock, KEYS[2] the stamp.
return {dataset(), redis.call('GET', KEYS[2]) or '', redis.call('EXISTS', KEYS[1])}
