package natsobj

// ChunkSize of the objects Put writes.
const ChunkSize = chunkSize

// SetSeekMin sets how many chunks into an object GetRange starts seeking
// (at least 1) and calls onSeek with the chunk and stream sequence of each
// seek.
func SetSeekMin(s *Store, chunks uint64, onSeek func(chunk, seq uint64)) {
	s.seekMin, s.onSeek = chunks, onSeek
}
