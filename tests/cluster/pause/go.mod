module nodewright.bridge/tests/cluster/pause

go 1.22
