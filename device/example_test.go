package device_test

import (
	"fmt"

	"github.com/gogml/gogml/device"
)

// Open devices by spec, as `gogml run -devices cpu,rpc://host:port` does.
func Example() {
	reg := device.Default(device.Options{Threads: 1})
	devs, err := reg.OpenList("cpu")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer device.CloseAll(devs)
	for _, d := range devs {
		fmt.Println(d.Name(), d.BufferType().Name())
	}
	// Output: CPU CPU
}
