package rewrite_test

import (
	"fmt"

	"github.com/rehost/rehost/pkg/rewrite"
)

func ExampleMapper_Map() {
	m, err := rewrite.NewMapper(rewrite.Config{Registry: "sea.hub:5000"})
	if err != nil {
		panic(err)
	}
	for _, image := range []string{"nginx", "bitnami/redis:7.2", "registry.k8s.io/pause:3.9", "sea.hub:5000/library/nginx:1.25"} {
		mp, err := m.Map(image)
		if err != nil {
			panic(err)
		}
		fmt.Printf("%-32s %-10s %s (list as %s)\n", image, mp.Action, mp.Target, mp.Source.Qualified())
	}
	// Output:
	// nginx                            rewritten  sea.hub:5000/library/nginx (list as docker.io/library/nginx:latest)
	// bitnami/redis:7.2                rewritten  sea.hub:5000/bitnami/redis:7.2 (list as docker.io/bitnami/redis:7.2)
	// registry.k8s.io/pause:3.9        rewritten  sea.hub:5000/pause:3.9 (list as registry.k8s.io/pause:3.9)
	// sea.hub:5000/library/nginx:1.25  in-target  sea.hub:5000/library/nginx:1.25 (list as sea.hub:5000/library/nginx:1.25)
}

func ExampleImageSet() {
	m, _ := rewrite.NewMapper(rewrite.Config{})
	var set rewrite.ImageSet
	for i, image := range []string{"docker.io/team/app:1", "quay.io/team/app:1"} {
		mp, _ := m.Map(image)
		err := set.Add(rewrite.Occurrence{Mapping: mp, Location: rewrite.Location{File: "app.yaml", Line: 10 * (i + 1)}})
		fmt.Println(err)
	}
	// Output:
	// <nil>
	// image collision: docker.io/team/app (app.yaml:10) and quay.io/team/app (app.yaml:20) both map to sea.hub:5000/team/app; use path style nest or exclude one of them
}
