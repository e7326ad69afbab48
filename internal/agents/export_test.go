package agents

// ForgetNames empties the front matter name cache (benchmarks of cold reads).
func (s *Service) ForgetNames() {
	s.names.mu.Lock()
	defer s.names.mu.Unlock()
	s.names.m = nil
}
