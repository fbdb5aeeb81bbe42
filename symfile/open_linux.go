package symfile

import "syscall"

// mmapFlags asks Linux to read the whole file in while mapping it, which
// costs far less than faulting it in a page at a time during the pass.
const mmapFlags = syscall.MAP_SHARED | syscall.MAP_POPULATE
