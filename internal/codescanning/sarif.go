package codescanning

import (
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// Limits of an upload.
const (
	// MaxGzipBytes is the largest gzipped SARIF accepted (the platform's
	// 10 MB); its base64 makes the request body about a third larger.
	MaxGzipBytes = 10 << 20
	// MaxSARIFBytes is the largest SARIF once decompressed.
	MaxSARIFBytes = 64 << 20
	// MaxRuns and MaxResults are the platform's limits per file and run.
	MaxRuns    = 20
	MaxResults = 25000
)

// errTooLarge is the decompressed SARIF over MaxSARIFBytes.
var errTooLarge = errors.New("the SARIF file is too large")

// decodeSARIF undoes the upload's gzip and base64.
func decodeSARIF(b64 string) ([]byte, error) {
	gz, err := base64.StdEncoding.DecodeString(strings.TrimSpace(b64))
	if err != nil {
		return nil, errors.New("the sarif field is not valid base64")
	}
	if len(gz) > MaxGzipBytes {
		return nil, errTooLarge
	}
	zr, err := gzip.NewReader(bytes.NewReader(gz))
	if err != nil {
		return nil, errors.New("the sarif field is not gzip-compressed")
	}
	out, err := io.ReadAll(io.LimitReader(zr, MaxSARIFBytes+1))
	if err != nil {
		return nil, errors.New("the sarif field is not valid gzip data")
	}
	if len(out) > MaxSARIFBytes {
		return nil, errTooLarge
	}
	return out, nil
}

// The SARIF 2.1.0 subset that code scanning reads.
type sarifLog struct {
	Version string     `json:"version"`
	Runs    []sarifRun `json:"runs"`
}

type sarifRun struct {
	Tool struct {
		Driver struct {
			Name            string      `json:"name"`
			Version         *string     `json:"version"`
			SemanticVersion *string     `json:"semanticVersion"`
			GUID            *string     `json:"guid"`
			Rules           []sarifRule `json:"rules"`
		} `json:"driver"`
	} `json:"tool"`
	AutomationDetails struct {
		ID string `json:"id"`
	} `json:"automationDetails"`
	Results []sarifResult `json:"results"`
}

type sarifText struct {
	Text string `json:"text"`
}

type sarifRule struct {
	ID                   string     `json:"id"`
	Name                 string     `json:"name"`
	ShortDescription     *sarifText `json:"shortDescription"`
	FullDescription      *sarifText `json:"fullDescription"`
	Help                 *sarifText `json:"help"`
	HelpURI              *string    `json:"helpUri"`
	DefaultConfiguration struct {
		Level string `json:"level"`
	} `json:"defaultConfiguration"`
	Properties struct {
		Tags             []string `json:"tags"`
		SecuritySeverity any      `json:"security-severity"`
	} `json:"properties"`
}

type sarifResult struct {
	RuleID              string            `json:"ruleId"`
	RuleIndex           *int              `json:"ruleIndex"`
	Rule                *sarifRuleRef     `json:"rule"`
	Level               string            `json:"level"`
	Message             sarifText         `json:"message"`
	Locations           []sarifLocation   `json:"locations"`
	PartialFingerprints map[string]string `json:"partialFingerprints"`
}

type sarifRuleRef struct {
	ID    string `json:"id"`
	Index *int   `json:"index"`
}

type sarifLocation struct {
	PhysicalLocation struct {
		ArtifactLocation struct {
			URI string `json:"uri"`
		} `json:"artifactLocation"`
		Region struct {
			StartLine   int `json:"startLine"`
			StartColumn int `json:"startColumn"`
			EndLine     int `json:"endLine"`
			EndColumn   int `json:"endColumn"`
		} `json:"region"`
	} `json:"physicalLocation"`
}

// Run is one analysis of an upload: a tool's results in one category.
type Run struct {
	ToolName    string
	ToolVersion *string
	ToolGUID    *string
	Category    string
	RulesCount  int
	Results     []Result
}

// Rule is what an alert shows of the rule that raised it.
type Rule struct {
	ID                    string
	Name                  string
	Severity              *string // none, note, warning, error
	SecuritySeverityLevel *string // low, medium, high, critical
	Description           string
	FullDescription       string
	Tags                  []string
	Help                  *string
	HelpURI               *string
}

// Result is one finding of a run.
type Result struct {
	Rule        Rule
	Fingerprint string
	Message     string
	Path        string
	StartLine   int
	EndLine     int
	StartColumn int
	EndColumn   int
}

// parseSARIF reads a SARIF 2.1.0 log into runs; toolName names the runs
// whose driver has no name ("API" when empty). An error is what the
// upload's status reports.
func parseSARIF(data []byte, checkoutURI, toolName string) ([]Run, error) {
	var log sarifLog
	if err := json.Unmarshal(data, &log); err != nil {
		return nil, fmt.Errorf("the SARIF file is not valid JSON: %v", err)
	}
	if log.Version != "2.1.0" {
		return nil, fmt.Errorf("unsupported SARIF version %q: code scanning reads SARIF 2.1.0", log.Version)
	}
	if len(log.Runs) == 0 {
		return nil, errors.New("the SARIF file has no runs")
	}
	if len(log.Runs) > MaxRuns {
		return nil, fmt.Errorf("the SARIF file has %d runs; at most %d are accepted", len(log.Runs), MaxRuns)
	}
	if toolName == "" {
		toolName = "API"
	}
	runs := make([]Run, 0, len(log.Runs))
	for i, r := range log.Runs {
		if len(r.Results) > MaxResults {
			return nil, fmt.Errorf("run %d has %d results; at most %d are accepted", i, len(r.Results), MaxResults)
		}
		run, err := toRun(r, checkoutURI, toolName)
		if err != nil {
			return nil, fmt.Errorf("run %d: %v", i, err)
		}
		runs = append(runs, run)
	}
	return runs, nil
}

func toRun(r sarifRun, checkoutURI, toolName string) (Run, error) {
	d := r.Tool.Driver
	run := Run{ToolName: d.Name, ToolVersion: d.Version, ToolGUID: d.GUID, Category: r.AutomationDetails.ID, RulesCount: len(d.Rules)}
	if run.ToolName == "" {
		run.ToolName = toolName
	}
	if run.ToolVersion == nil {
		run.ToolVersion = d.SemanticVersion
	}
	byID := map[string]sarifRule{}
	for _, rule := range d.Rules {
		byID[rule.ID] = rule
	}
	for j, res := range r.Results {
		rule, ok := ruleOf(res, d.Rules, byID)
		if !ok {
			return run, fmt.Errorf("result %d names no rule", j)
		}
		if len(res.Locations) == 0 {
			continue // results without a place in the code are not alerts
		}
		loc := res.Locations[0].PhysicalLocation
		path := relativePath(loc.ArtifactLocation.URI, checkoutURI)
		if path == "" || loc.Region.StartLine < 1 {
			return run, fmt.Errorf("result %d has no file and start line", j)
		}
		out := Result{Rule: toRule(rule, res.Level), Message: res.Message.Text, Path: path,
			StartLine: loc.Region.StartLine, EndLine: max(loc.Region.EndLine, loc.Region.StartLine),
			StartColumn: max(loc.Region.StartColumn, 1), EndColumn: loc.Region.EndColumn}
		if out.EndColumn == 0 {
			out.EndColumn = out.StartColumn
		}
		out.Fingerprint = fingerprint(res, out)
		run.Results = append(run.Results, out)
	}
	return run, nil
}

// ruleOf finds the result's rule by index or id; a rule the driver does
// not describe is a bare rule of that id.
func ruleOf(res sarifResult, rules []sarifRule, byID map[string]sarifRule) (sarifRule, bool) {
	id, index := res.RuleID, res.RuleIndex
	if res.Rule != nil {
		if id == "" {
			id = res.Rule.ID
		}
		if index == nil {
			index = res.Rule.Index
		}
	}
	if index != nil && *index >= 0 && *index < len(rules) {
		return rules[*index], true
	}
	if r, ok := byID[id]; ok {
		return r, true
	}
	return sarifRule{ID: id}, id != ""
}

// toRule is the alert's rule: severity from the result's level or the
// rule's default (warning when neither says), the security severity
// level from the rule's security-severity score.
func toRule(r sarifRule, level string) Rule {
	out := Rule{ID: r.ID, Name: r.Name, Tags: r.Properties.Tags, HelpURI: r.HelpURI}
	if out.Name == "" {
		out.Name = r.ID
	}
	if out.Tags == nil {
		out.Tags = []string{}
	}
	if r.ShortDescription != nil {
		out.Description = r.ShortDescription.Text
	}
	if r.FullDescription != nil {
		out.FullDescription = r.FullDescription.Text
	}
	if r.Help != nil {
		out.Help = &r.Help.Text
	}
	if level == "" {
		level = r.DefaultConfiguration.Level
	}
	switch level {
	case "none", "note", "warning", "error":
	default:
		level = "warning"
	}
	out.Severity = &level
	if s := securityLevel(r.Properties.SecuritySeverity); s != "" {
		out.SecuritySeverityLevel = &s
	}
	return out
}

// securityLevel maps a CVSS-like score to the platform's levels: over 9.0
// critical, 7.0 to 8.9 high, 4.0 to 6.9 medium, 0.1 to 3.9 low.
func securityLevel(v any) string {
	var score float64
	switch s := v.(type) {
	case string:
		f, err := strconv.ParseFloat(s, 64)
		if err != nil {
			return ""
		}
		score = f
	case float64:
		score = s
	default:
		return ""
	}
	switch {
	case score >= 9:
		return "critical"
	case score >= 7:
		return "high"
	case score >= 4:
		return "medium"
	case score > 0:
		return "low"
	}
	return ""
}

// relativePath is the artifact's path in the repository: the checkout
// URI and a file: scheme removed.
func relativePath(uri, checkoutURI string) string {
	if checkoutURI != "" {
		uri = strings.TrimPrefix(uri, strings.TrimSuffix(checkoutURI, "/")+"/")
	}
	uri = strings.TrimPrefix(uri, "file://")
	return strings.TrimPrefix(uri, "/")
}

// fingerprint identifies the finding across analyses: the tool's
// primaryLocationLineHash when it gives one, else the place and message.
func fingerprint(res sarifResult, r Result) string {
	if fp := res.PartialFingerprints["primaryLocationLineHash"]; fp != "" {
		return fp
	}
	sum := sha256.Sum256([]byte(fmt.Sprintf("%s\x00%d\x00%d\x00%s", r.Path, r.StartLine, r.StartColumn, r.Message)))
	return hex.EncodeToString(sum[:16])
}
