package depreview

import "time"

func testingNow() int64 { return time.Now().UnixNano() }
