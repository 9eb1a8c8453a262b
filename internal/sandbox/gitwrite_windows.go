package sandbox

// oNoFollow: Windows has no sandbox backend, and no O_NOFOLLOW.
const oNoFollow = 0
