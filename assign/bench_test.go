package assign

import "testing"

func BenchmarkAssigner_Route(b *testing.B) {
	weighted := equalTable(1, span(0, 10)...)
	for i := range weighted.Nodes {
		weighted.Nodes[i].Weight = 0.5 + 0.05*float64(i)
	}
	tests := []struct {
		name  string
		mode  Mode
		table Table
	}{
		{"rendezvous equal n=10", ModeRendezvous, equalTable(1, span(0, 10)...)},
		{"rendezvous weighted n=10", ModeRendezvous, weighted},
		{"rendezvous equal n=64", ModeRendezvous, equalTable(1, span(0, 64)...)},
		{"paper n=10", ModePaper, equalTable(1, span(0, 10)...)},
	}
	ks := keys(1 << 16)
	for _, tt := range tests {
		b.Run(tt.name, func(b *testing.B) {
			s := mustSnapshot(b, mustAssigner(b, Options{Slots: 64, Mode: tt.mode}), tt.table)
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				if _, err := s.Route(ks[i&(len(ks)-1)]); err != nil {
					b.Fatal(err)
				}
				i++
			}
		})
	}
}
